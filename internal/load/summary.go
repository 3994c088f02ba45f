package load

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	textpkg "github.com/perfexp/perfexp/internal/text"
)

// maxSummaryBytes bounds one stored summary; maxSummariesBytes all of an experiment's, under
// the API server's 1 MiB object limit. A summary that does not fit is left out and said so.
const (
	maxSummaryBytes   = 256 * 1024
	maxSummariesBytes = 900 * 1024
)

// errNoSummary means a log holds no k6 JSON summary (k6 failed before the end of the test, or
// the log was cut before it).
var errNoSummary = errors.New("no k6 summary in the log")

// Summary is k6's end-of-test summary as --summary-export writes it.
type Summary struct {
	// Metrics are k6's metrics by name (iterations, http_reqs, http_req_duration, vus_max...),
	// each a map of statistic to value (count, rate, avg, p(95), value, min, max...).
	Metrics map[string]SummaryMetric `json:"metrics"`
}

// SummaryMetric is one metric of a summary. Statistics are numbers; "thresholds" (a map of
// threshold to whether it failed) is kept apart.
type SummaryMetric map[string]json.RawMessage

// Value returns a numeric statistic of a metric and whether it is there.
func (m SummaryMetric) Value(stat string) (float64, bool) {
	raw, ok := m[stat]
	if !ok {
		return 0, false
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, false
	}
	return v, true
}

// ScenarioCounts are the counts of one k6 scenario in a summary.
type ScenarioCounts struct {
	Requests, Failed, Iterations int64
}

// Scenarios returns the counts of each k6 scenario that the summary holds submetrics for
// (http_reqs{scenario:NAME}, ...): every scenario of a script that runs its own execution
// options, as the entry script declares them.
func (s Summary) Scenarios() map[string]ScenarioCounts {
	out := map[string]ScenarioCounts{}
	for key, m := range s.Metrics {
		metric, rest, ok := strings.Cut(key, "{scenario:")
		if !ok || !strings.HasSuffix(rest, "}") {
			continue
		}
		name := strings.TrimSuffix(rest, "}")
		c := out[name]
		switch metric {
		case "http_reqs":
			v, _ := m.Value("count")
			c.Requests = int64(v)
		case "http_req_failed":
			v, _ := m.Value("passes")
			c.Failed = int64(v)
		case "iterations":
			v, _ := m.Value("count")
			c.Iterations = int64(v)
		default:
			continue
		}
		out[name] = c
	}
	return out
}

func parseSummary(data []byte) (Summary, error) {
	var s Summary
	err := json.Unmarshal(data, &s)
	return s, err
}

// ExtractSummary finds perfexp's summary of a k6 run in its log and returns it as compact JSON
// (the --summary-export format). Framed lines (SummaryFrame), which the entry script prints when
// the script has a handleSummary of its own, come first: they hold together whatever the script
// prints around them. Without them the log holds k6's --summary-export JSON, and nothing of the
// script on standard output: k6 prints its text summary and the JSON (which starts with a line
// holding only "{") in either order, and console.log lines are logfmt, so the last line that is
// exactly "{" starts the summary. k6's own log lines are left out first (see withoutLogLines).
func ExtractSummary(log []byte) ([]byte, error) {
	if framed, ok := framedSummary(log); ok {
		return framed, nil
	}
	log = withoutLogLines(log)
	lines := bytes.Split(log, []byte("\n"))
	offset := len(log)
	for i := len(lines) - 1; i >= 0; i-- {
		offset -= len(lines[i])
		if i < len(lines)-1 {
			offset-- // the newline after this line
		}
		if string(bytes.TrimRight(lines[i], "\r")) != "{" {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(log[offset:]))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			continue
		}
		if out, ok := summaryJSON(raw); ok {
			return out, nil
		}
	}
	return nil, errNoSummary
}

// withoutLogLines drops the lines of k6's own log from a pod log. k6 writes its log to standard
// error and the summary to standard output, and the pod log API merges the two streams line by
// line in the order they were written: k6's "thresholds on metrics ... have been crossed" error
// is written while the summary is, and on the local cluster it landed inside the JSON in 2 of 4
// runs whose k6 exited 99 (the summary then could not be decoded). A log line is logfmt
// (time="..." level=...) or, with --log-format json, an object on one line ({"level":...});
// no line of the indented summary starts with either.
func withoutLogLines(log []byte) []byte {
	if !bytes.Contains(log, []byte("time=\"")) && !bytes.Contains(log, []byte("\n{\"")) && !bytes.HasPrefix(log, []byte("{\"")) {
		return log
	}
	lines := bytes.SplitAfter(log, []byte("\n"))
	out := make([]byte, 0, len(log))
	for _, l := range lines {
		if bytes.HasPrefix(l, []byte("time=\"")) || bytes.HasPrefix(l, []byte("{\"")) {
			continue
		}
		out = append(out, l...)
	}
	return out
}

// summaryJSON compacts a summary document, if raw is one (an object with metrics).
func summaryJSON(raw []byte) ([]byte, bool) {
	var probe struct {
		Metrics map[string]json.RawMessage `json:"metrics"`
	}
	if json.Unmarshal(raw, &probe) != nil || probe.Metrics == nil {
		return nil, false
	}
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil {
		return nil, false
	}
	return out.Bytes(), true
}

// framedSummary puts together the last run's complete set of SummaryFrame lines.
func framedSummary(log []byte) ([]byte, bool) {
	type run struct {
		chunks map[int]string
		n      int
	}
	runs := map[string]*run{}
	var order []string
	prefix := []byte(SummaryFrame + " ")
	for _, line := range bytes.Split(log, []byte("\n")) {
		i := bytes.Index(line, prefix)
		if i < 0 {
			continue
		}
		fields := strings.SplitN(string(bytes.TrimRight(line[i+len(prefix):], "\r")), " ", 4)
		if len(fields) != 4 {
			continue
		}
		idx, err1 := strconv.Atoi(fields[1])
		n, err2 := strconv.Atoi(fields[2])
		if err1 != nil || err2 != nil || n < 1 || idx < 0 || idx >= n {
			continue
		}
		r := runs[fields[0]]
		if r == nil {
			r = &run{chunks: map[int]string{}, n: n}
			runs[fields[0]] = r
			order = append(order, fields[0])
		}
		if r.n == n {
			r.chunks[idx] = fields[3]
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		r := runs[order[i]]
		if len(r.chunks) != r.n {
			continue
		}
		var b strings.Builder
		for j := 0; j < r.n; j++ {
			b.WriteString(r.chunks[j])
		}
		if out, ok := summaryJSON([]byte(b.String())); ok {
			return out, true
		}
	}
	return nil, false
}

// LogTail is the end of a log for a failure message: its last lines, without k6's JSON
// summary, with secrets redacted (see Redact) and terminal control characters replaced
// (text.Printable), at most max bytes. The message reaches conditions, events and terminals.
func LogTail(log []byte, lines, limit int) string {
	text := Redact(textpkg.Printable(string(log)))
	if i := strings.LastIndex(text, "\n{\n"); i >= 0 {
		if j := strings.Index(text[i:], "\n}\n"); j >= 0 {
			text = text[:i] + text[i+j+2:]
		} else {
			text = text[:i]
		}
	}
	all := strings.Split(strings.TrimRight(text, "\n"), "\n")
	all = slices.DeleteFunc(all, func(l string) bool { return strings.Contains(l, SummaryFrame+" ") })
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	out := strings.Join(all, "\n")
	if len(out) > limit {
		cut := len(out) - limit + 3
		for cut < len(out) && !utf8.RuneStart(out[cut]) {
			cut++ // never start inside a character
		}
		out = "..." + out[cut:]
	}
	return out
}

// ReadSummaries returns the kept k6 summaries of an experiment by key (<scenario>-<index>.json).
func ReadSummaries(ctx context.Context, c client.Reader, exp *perfexpv1alpha1.PerfExperiment) (map[string]Summary, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: exp.Namespace, Name: SummariesName(exp)}, cm); err != nil {
		return nil, err
	}
	out := make(map[string]Summary, len(cm.Data))
	for k, v := range cm.Data {
		if !strings.HasSuffix(k, ".json") {
			continue
		}
		s, err := parseSummary([]byte(v))
		if err != nil {
			return nil, fmt.Errorf("summary %s: %w", k, err)
		}
		out[k] = s
	}
	return out, nil
}

// summaryStore keeps the summaries of one experiment in a ConfigMap it owns.
type summaryStore struct {
	c   client.Client
	exp *perfexpv1alpha1.PerfExperiment
	cm  *corev1.ConfigMap
	// before is the ConfigMap as read, once something was added.
	before *corev1.ConfigMap
}

// annotationOmitted lists the summaries that were left out for size, or never found.
const annotationOmitted = "perfexp.dev/summaries-omitted"

func (r *Runner) summaries(ctx context.Context, exp *perfexpv1alpha1.PerfExperiment) (*summaryStore, error) {
	s := &summaryStore{c: r.c, exp: exp, cm: &corev1.ConfigMap{}}
	// Read from the API server, not the cache: it is the record of which summaries were read,
	// and the next call comes within a fraction of a second when a call left some unread.
	err := r.reader().Get(ctx, types.NamespacedName{Namespace: exp.Namespace, Name: SummariesName(exp)}, s.cm)
	if apierrors.IsNotFound(err) {
		s.cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: SummariesName(exp), Namespace: exp.Namespace,
			Labels: labels(exp, componentLoad, ""),
		}}
		if err := controllerutil.SetControllerReference(exp, s.cm, r.c.Scheme()); err != nil {
			return nil, err
		}
		if err := r.c.Create(ctx, s.cm); err != nil {
			return nil, fmt.Errorf("creating the summaries ConfigMap: %w", err)
		}
	} else if err != nil {
		return nil, err
	}
	if exp.Status.Load == nil {
		exp.Status.Load = &perfexpv1alpha1.LoadStatus{}
	}
	exp.Status.Load.SummariesRef = &perfexpv1alpha1.LocalObjectReference{Name: s.cm.Name}
	return s, nil
}

// has reports whether a summary was kept or given up for key.
func (s *summaryStore) has(key string) bool {
	if _, ok := s.cm.Data[key]; ok {
		return true
	}
	for _, k := range strings.Split(s.cm.Annotations[annotationOmitted], ",") {
		if k == key {
			return true
		}
	}
	return false
}

func (s *summaryStore) size() int {
	n := 0
	for k, v := range s.cm.Data {
		n += len(k) + len(v)
	}
	return n
}

// add keeps one summary, or records that it was left out (summary nil, or too large), in the
// copy read; save writes what was added.
func (s *summaryStore) add(key string, summary []byte) (kept bool) {
	if s.before == nil {
		s.before = s.cm.DeepCopy()
	}
	if summary != nil && len(summary) <= maxSummaryBytes && s.size()+len(key)+len(summary) <= maxSummariesBytes {
		if s.cm.Data == nil {
			s.cm.Data = map[string]string{}
		}
		s.cm.Data[key] = string(summary)
		return true
	}
	if s.cm.Annotations == nil {
		s.cm.Annotations = map[string]string{}
	}
	omitted := strings.Split(s.cm.Annotations[annotationOmitted], ",")
	omitted = append(omitted, key)
	sort.Strings(omitted)
	s.cm.Annotations[annotationOmitted] = strings.Trim(strings.Join(omitted, ","), ",")
	return false
}

// save writes the summaries added since the store was read, in one patch.
func (s *summaryStore) save(ctx context.Context) error {
	if s.before == nil {
		return nil
	}
	// Conditional on the copy read: a write from a stale copy would drop the omitted list.
	if err := s.c.Patch(ctx, s.cm, client.MergeFromWithOptions(s.before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("keeping summaries: %w", err)
	}
	s.before = nil
	return nil
}
