package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testexp"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// exp builds an experiment that went through phases, entering the i-th at t0 + at[i] seconds.
func exp(name string, phases []perfexpv1alpha1.Phase, at []int) *perfexpv1alpha1.PerfExperiment {
	opts := []testexp.Option{testexp.WithScenarios(), testexp.WithTestID("team-" + name),
		testexp.WithVariant(&perfexpv1alpha1.Variant{Description: "no CPU limits"})}
	for i, p := range phases {
		opts = append(opts, testexp.InPhase(p, t0.Add(time.Duration(at[i])*time.Second)))
	}
	return testexp.New("team", name, opts...)
}

// step is exp with one more phase entered at t0 + sec, as a reconcile would write it.
func step(e *perfexpv1alpha1.PerfExperiment, p perfexpv1alpha1.Phase, sec int) *perfexpv1alpha1.PerfExperiment {
	out := e.DeepCopy()
	testexp.InPhase(p, t0.Add(time.Duration(sec)*time.Second))(out)
	return out
}

// A whole run, reconcile by reconcile, produces each duration once, with the right value.
func TestRecordARun(t *testing.T) {
	r := New()
	const q = "env-a"
	e := exp("run", []perfexpv1alpha1.Phase{perfexpv1alpha1.PhasePending}, []int{0})
	r.Record(&perfexpv1alpha1.PerfExperiment{ObjectMeta: e.ObjectMeta}, e, q)
	for _, s := range []struct {
		phase perfexpv1alpha1.Phase
		at    int
	}{
		{perfexpv1alpha1.PhaseQueued, 1}, {perfexpv1alpha1.PhasePreparing, 91}, {perfexpv1alpha1.PhaseRunning, 121},
		{perfexpv1alpha1.PhaseRestoring, 721}, {perfexpv1alpha1.PhaseAnalyzing, 741}, {perfexpv1alpha1.PhaseSucceeded, 746},
	} {
		next := step(e, s.phase, s.at)
		if s.phase == perfexpv1alpha1.PhaseAnalyzing {
			next.Status.Conditions = []metav1.Condition{{Type: perfexpv1alpha1.ConditionEnvironmentRestored, Status: metav1.ConditionTrue}}
		}
		r.Record(e, next, q)
		r.Record(next, next, q) // a reconcile that changed nothing records nothing more
		e = next
	}

	checkHistogram(t, r.queueWait, 1, 90)
	checkHistogram(t, r.restoreDuration, 1, 20)
	checkHistogram(t, r.analysisSeconds, 1, 5)
	checkHistogram(t, r.phaseDuration, 6, 746)
	if got := testutil.ToFloat64(r.restores.WithLabelValues(q, "restored")); got != 1 {
		t.Errorf("restores restored = %v, want 1", got)
	}
	want := `
# HELP perfexp_experiments Experiments the operator knows, by phase and queue.
# TYPE perfexp_experiments gauge
perfexp_experiments{phase="Succeeded",queue="env-a"} 1
# HELP perfexp_queue_length Experiments waiting in a queue (phase Pending or Queued).
# TYPE perfexp_queue_length gauge
perfexp_queue_length{queue="env-a"} 0
`
	if err := testutil.CollectAndCompare(r, strings.NewReader(want), "perfexp_experiments", "perfexp_queue_length", "perfexp_experiment_info"); err != nil {
		t.Error(err)
	}
}

// checkHistogram asserts the number and sum of every observation of a histogram vector.
func checkHistogram(t *testing.T, h *prometheus.HistogramVec, count uint64, sum float64) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(h)
	families, err := reg.Gather()
	if err != nil || len(families) != 1 {
		t.Fatalf("gathering: %v (%d families)", err, len(families))
	}
	var gotCount uint64
	var gotSum float64
	for _, m := range families[0].GetMetric() {
		gotCount += m.GetHistogram().GetSampleCount()
		gotSum += m.GetHistogram().GetSampleSum()
	}
	if gotCount != count || gotSum != sum {
		t.Errorf("%s: %d observations summing to %v, want %d summing to %v", families[0].GetName(), gotCount, gotSum, count, sum)
	}
}

// The gauges count experiments by phase and queue, the info series names the running ones,
// and a deleted experiment leaves every gauge.
func TestGauges(t *testing.T) {
	running := exp("running", []perfexpv1alpha1.Phase{perfexpv1alpha1.PhaseRunning}, []int{0})
	queued := exp("queued", []perfexpv1alpha1.Phase{perfexpv1alpha1.PhaseQueued}, []int{0})
	pending := exp("pending", nil, nil)
	pending.Spec.Variant = nil
	other := exp("other", []perfexpv1alpha1.Phase{perfexpv1alpha1.PhaseFailed}, []int{0})

	tests := []struct {
		name   string
		record func(r *Recorder)
		want   string
	}{
		{name: "one of each", record: func(r *Recorder) {
			r.Record(running, running, "env-a")
			r.Record(queued, queued, "env-a")
			r.Record(pending, pending, "env-a")
			r.Record(other, other, "env-b")
		}, want: `
# HELP perfexp_experiment_info 1 for every experiment between leaving its queue and its end; its labels annotate dashboards.
# TYPE perfexp_experiment_info gauge
perfexp_experiment_info{name="running",namespace="team",phase="Running",queue="env-a",testid="team-running",variant="no CPU limits"} 1
# HELP perfexp_experiments Experiments the operator knows, by phase and queue.
# TYPE perfexp_experiments gauge
perfexp_experiments{phase="Failed",queue="env-b"} 1
perfexp_experiments{phase="Pending",queue="env-a"} 1
perfexp_experiments{phase="Queued",queue="env-a"} 1
perfexp_experiments{phase="Running",queue="env-a"} 1
# HELP perfexp_queue_length Experiments waiting in a queue (phase Pending or Queued).
# TYPE perfexp_queue_length gauge
perfexp_queue_length{queue="env-a"} 2
perfexp_queue_length{queue="env-b"} 0
`},
		{name: "deleted and let go", record: func(r *Recorder) {
			r.Record(running, running, "env-a")
			deleted := running.DeepCopy()
			now := metav1.NewTime(t0)
			deleted.DeletionTimestamp = &now
			deleted.Finalizers = []string{perfexpv1alpha1.Finalizer}
			r.Record(running, deleted, "env-a")
			if err := testutil.CollectAndCompare(r, strings.NewReader(`
# HELP perfexp_experiments Experiments the operator knows, by phase and queue.
# TYPE perfexp_experiments gauge
perfexp_experiments{phase="Running",queue="env-a"} 1
`), "perfexp_experiments"); err != nil {
				t.Errorf("while the finalizer holds it: %v", err)
			}
			deleted.Finalizers = nil
			r.Record(running, deleted, "env-a")
		}, want: ""},
		{name: "read as gone", record: func(r *Recorder) {
			r.Record(queued, queued, "env-a")
			key := types.NamespacedName{Namespace: queued.Namespace, Name: queued.Name}
			r.Forget(key, errors.New("connection refused")) // not a NotFound: kept
			r.Forget(key, nil)
			r.Record(running, running, "env-a")
			r.Forget(types.NamespacedName{Namespace: running.Namespace, Name: running.Name},
				apierrors.NewNotFound(schema.GroupResource{Group: "perfexp.dev", Resource: "perfexperiments"}, running.Name))
		}, want: `
# HELP perfexp_experiments Experiments the operator knows, by phase and queue.
# TYPE perfexp_experiments gauge
perfexp_experiments{phase="Queued",queue="env-a"} 1
# HELP perfexp_queue_length Experiments waiting in a queue (phase Pending or Queued).
# TYPE perfexp_queue_length gauge
perfexp_queue_length{queue="env-a"} 1
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New()
			tt.record(r)
			if err := testutil.CollectAndCompare(r, strings.NewReader(tt.want), "perfexp_experiments", "perfexp_queue_length", "perfexp_experiment_info"); err != nil {
				t.Error(err)
			}
		})
	}
}

// leftPhases attributes each new history entry to the phase before it, even when the capped
// history dropped its oldest entries, and nothing when the histories are unrelated.
func TestLeftPhases(t *testing.T) {
	h := exp("h", []perfexpv1alpha1.Phase{perfexpv1alpha1.PhaseQueued, perfexpv1alpha1.PhasePreparing, perfexpv1alpha1.PhaseRunning, perfexpv1alpha1.PhaseRestoring}, []int{0, 10, 30, 60}).Status.PhaseHistory
	tests := []struct {
		name          string
		before, after []perfexpv1alpha1.PhaseTransition
		want          []left
	}{
		{name: "first entry", after: h[:1]},
		{name: "one step", before: h[:2], after: h[:3], want: []left{{perfexpv1alpha1.PhasePreparing, perfexpv1alpha1.PhaseRunning, 20}}},
		{name: "two steps in one reconcile", before: h[:1], after: h[:3],
			want: []left{{perfexpv1alpha1.PhaseQueued, perfexpv1alpha1.PhasePreparing, 10}, {perfexpv1alpha1.PhasePreparing, perfexpv1alpha1.PhaseRunning, 20}}},
		{name: "capped history", before: h[:3], after: h[1:], want: []left{{perfexpv1alpha1.PhaseRunning, perfexpv1alpha1.PhaseRestoring, 30}}},
		{name: "no change", before: h, after: h},
		{name: "unrelated", before: h[3:], after: h[:2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := leftPhases(tt.before, tt.after)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("[%d] got %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
