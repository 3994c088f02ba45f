package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func queued(name string, phase perfexpv1alpha1.Phase, position int32, created time.Time) perfexpv1alpha1.PerfExperiment {
	e := perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: name, CreationTimestamp: metav1.NewTime(created)}}
	e.Spec.TargetNamespace = "shop"
	e.Status.Queue, e.Status.Phase, e.Status.QueuePosition = "shop", phase, position
	e.Status.TestID = name + "-0a1b2c3d"
	return e
}

// The queue prints through cli-runtime's table printer, as kubectl get prints: upper-case
// headers, three spaces between columns, the wide columns only with -o wide, kubectl's ages.
func TestQueueTablePrinter(t *testing.T) {
	now := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	rows := []perfexpv1alpha1.PerfExperiment{
		queued("second", perfexpv1alpha1.PhaseQueued, 1, now.Add(-90*time.Second)),
		queued("running", perfexpv1alpha1.PhaseRunning, 0, now.Add(-26*time.Hour)),
	}
	rows[0].Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "running"}
	tests := []struct {
		name  string
		table queueTable
		want  string
	}{
		{"default", queueTable{}, `QUEUE   POSITION   NAMESPACE   NAME      PHASE     PRIORITY   AGE
shop    -          perf        running   Running   0          26h
shop    1          perf        second    Queued    0          90s
`},
		{"wide", queueTable{wide: true}, `QUEUE   POSITION   NAMESPACE   NAME      PHASE     PRIORITY   AGE   TARGET   BASELINE
shop    -          perf        running   Running   0          26h   shop     -
shop    1          perf        second    Queued    0          90s   shop     running
`},
		{"no headers", queueTable{noHeaders: true}, `shop   -     perf   running   Running   0     26h
shop   1     perf   second    Queued    0     90s
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := printQueue(&b, rows, "", now, tc.table); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

func TestQueueCustomColumns(t *testing.T) {
	now := time.Now()
	rows := []perfexpv1alpha1.PerfExperiment{queued("second", perfexpv1alpha1.PhaseQueued, 1, now)}
	cols, err := parseCustomColumns("NAME:.metadata.name,TESTID:{.status.testID},BASELINE:.spec.baseline.name")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := printQueue(&b, rows, "", now, queueTable{columns: cols}); err != nil {
		t.Fatal(err)
	}
	want := "NAME     TESTID            BASELINE\nsecond   second-0a1b2c3d   <none>\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	for _, bad := range []string{"", "NAME", "NAME:.metadata.name,:.x", "NAME:{.metadata.name"} {
		if _, err := parseCustomColumns(bad); err == nil {
			t.Errorf("custom-columns=%s accepted", bad)
		}
	}
}

// --watch prints the table, then each row whose phase or place changed, without a header, and
// an experiment that ended once more with its last phase.
func TestWatchQueue(t *testing.T) {
	now := time.Now()
	states := [][]perfexpv1alpha1.PerfExperiment{
		{queued("first", perfexpv1alpha1.PhaseRunning, 0, now), queued("second", perfexpv1alpha1.PhaseQueued, 1, now)},
		{queued("first", perfexpv1alpha1.PhaseRunning, 0, now), queued("second", perfexpv1alpha1.PhaseQueued, 1, now)},
		{queued("first", perfexpv1alpha1.PhaseSucceeded, 0, now), queued("second", perfexpv1alpha1.PhasePreparing, 0, now)},
	}
	var mu sync.Mutex
	calls := 0
	ctx, cancel := context.WithCancel(t.Context())
	list := func(context.Context) ([]perfexpv1alpha1.PerfExperiment, error) {
		mu.Lock()
		defer mu.Unlock()
		i := min(calls, len(states)-1)
		calls++
		if calls > len(states)+2 {
			cancel()
		}
		return states[i], nil
	}
	var b bytes.Buffer
	if err := watchQueue(ctx, &b, list, "", time.Millisecond, queueTable{}, func() time.Time { return now }); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "QUEUE") || !strings.Contains(lines[3], "second") || !strings.Contains(lines[3], "Preparing") ||
		!strings.Contains(lines[4], "first") || !strings.Contains(lines[4], "Succeeded") || strings.Count(b.String(), "QUEUE") != 1 {
		t.Errorf("want the table, then second Preparing and first Succeeded, one header:\n%s", b.String())
	}
}
