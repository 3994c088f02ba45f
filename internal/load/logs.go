package load

import (
	"context"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// maxLogTail bounds what perfexp reads of a pod's log: enough for k6's text summary and a JSON
// summary of hundreds of metrics, never a 24-hour log.
const maxLogTail = 1 << 20

// PodLogs reads the end of a container's log.
type PodLogs interface {
	// Tail returns at most maxBytes of the end of the log of one container of a pod.
	Tail(ctx context.Context, namespace, pod, container string, maxBytes int) ([]byte, error)
}

// NewPodLogs reads logs through the API server's pods/log subresource.
func NewPodLogs(cs kubernetes.Interface) PodLogs { return clientLogs{cs} }

type clientLogs struct{ cs kubernetes.Interface }

// tailLines asks the kubelet for no more lines than a summary and a text report need, so a long
// run's log is not streamed whole.
const tailLines = 20000

func (l clientLogs) Tail(ctx context.Context, namespace, pod, container string, maxBytes int) ([]byte, error) {
	req := l.cs.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: ptr.To[int64](tailLines)})
	rc, err := req.Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	return readTail(rc, maxBytes)
}

// readTail keeps the last max bytes of r. The log API can only limit from the start
// (limitBytes) or by lines, so the byte bound on the end is kept here.
func readTail(r io.Reader, limit int) ([]byte, error) {
	buf := make([]byte, 0, min(limit, 64*1024))
	chunk := make([]byte, 32*1024)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if len(buf) > limit {
			buf = append(buf[:0], buf[len(buf)-limit:]...)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
