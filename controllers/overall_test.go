package controllers_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// plannedLab is the lab with a planned load duration per experiment (one second unless set).
type plannedLab struct {
	*lab
	planned map[string]time.Duration
}

func (l *plannedLab) PlannedDuration(exp *perfexpv1alpha1.PerfExperiment) time.Duration {
	if d, ok := l.planned[exp.Name]; ok {
		return d
	}
	return time.Second
}

// TestOverallTimeoutBounds: no experiment holds its queue longer than the operator allows.
// Without spec.timeouts.overall the operator's default bounds it (there was no bound at all, so
// a load of 32 stages of 168h held a queue for months); a timeout beyond the operator's bound,
// or a planned load that cannot end within its timeout, is refused before the experiment joins
// its queue.
func TestOverallTimeoutBounds(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	ns := env.Namespace(t, "overall")
	l := newLab()
	pl := &plannedLab{lab: l, planned: map[string]time.Duration{"long-soak": 72 * time.Hour}}
	startOperatorOpts(t, env, operatorOptions{workers: 2, defaultOverall: 3 * time.Second, maxOverall: 192 * time.Hour}, l, pl, l)

	overall := func(d time.Duration) func(*perfexpv1alpha1.PerfExperiment) {
		return func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Timeouts = &perfexpv1alpha1.Timeouts{Overall: &metav1.Duration{Duration: d}}
		}
	}
	refusals := []struct {
		name, says string
		edit       func(*perfexpv1alpha1.PerfExperiment)
	}{
		{name: "long-soak", says: "longer than the default overall timeout of 3s: set spec.timeouts.overall (at most 192h0m0s)"},
		{name: "months", edit: overall(200 * time.Hour), says: "spec.timeouts.overall is 200h0m0s, longer than the 192h0m0s this operator allows"},
		{name: "too-tight", edit: overall(time.Second), says: "as long as or longer than spec.timeouts.overall (1s): it would be stopped before its end"},
	}
	for _, tt := range refusals {
		t.Run("refused before it joins the queue: "+tt.name, func(t *testing.T) {
			exp := experiment(ns, tt.name, tt.name, 0)
			if tt.edit != nil {
				tt.edit(exp)
			}
			mustCreate(t, c, exp)
			got := waitPhase(t, c, ns, tt.name, perfexpv1alpha1.PhaseFailed)
			ready := condition(got, perfexpv1alpha1.ConditionReady)
			if ready == nil || ready.Reason != perfexpv1alpha1.ReasonInvalidTimeouts || !strings.Contains(ready.Message, tt.says) {
				t.Fatalf("Ready %+v; want %s saying %q", ready, perfexpv1alpha1.ReasonInvalidTimeouts, tt.says)
			}
			if got.Status.StartTime != nil || l.restores(tt.name) != 0 {
				t.Errorf("it left the queue (startTime %v, %d restores)", got.Status.StartTime, l.restores(tt.name))
			}
		})
	}

	t.Run("a run without timeouts.overall is stopped by the operator's default", func(t *testing.T) {
		mustCreate(t, c, experiment(ns, "endless", "endless", 0)) // its load never finishes
		got := waitPhase(t, c, ns, "endless", perfexpv1alpha1.PhaseFailed)
		ready := condition(got, perfexpv1alpha1.ConditionReady)
		if ready == nil || ready.Reason != perfexpv1alpha1.ReasonTimedOut || !strings.Contains(ready.Message, "the overall timeout of 3s passed") {
			t.Fatalf("Ready %+v; want %s after 3s", ready, perfexpv1alpha1.ReasonTimedOut)
		}
		if l.restores("endless") == 0 {
			t.Error("the environment was not restored")
		}
	})
}

// TestQueuedEditsAreCheckedAgain: what Pending checked is checked again as the experiment
// takes its queue's lock. The spec is frozen from Queued on; an edit admitted in the moment
// between Pending's checks and the write that says Queued (played here by removing the
// frozen-spec policy's binding) must not reach the environment: a 720 h overall timeout past
// the 192 h maximum, or another queue under the lock of the one it joined, fails the run
// before anything is patched.
func TestQueuedEditsAreCheckedAgain(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	c := env.Client
	ns := env.Namespace(t, "recheck")
	l := newLab()
	startOperatorOpts(t, env, operatorOptions{workers: 2, maxOverall: 192 * time.Hour}, l, l, l)

	mustCreate(t, c, experiment(ns, "holder", "recheck", 0))
	waitPhase(t, c, ns, "holder", perfexpv1alpha1.PhaseRunning)
	mustCreate(t, c, experiment(ns, "longer", "recheck", 10))
	mustCreate(t, c, experiment(ns, "moved", "recheck", 5))
	expectPositions(t, c, ns, "holder", []string{"longer", "moved"})

	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "perfexp-spec-frozen"}}
	if err := c.Delete(t.Context(), binding); err != nil {
		t.Fatal(err)
	}
	edit := func(name string, change func(*perfexpv1alpha1.PerfExperiment)) {
		eventually(t, 30*time.Second, "an edit of queued "+name+" admitted", func() error {
			exp := get(t, c, ns, name)
			change(exp)
			return c.Update(t.Context(), exp)
		})
	}
	edit("longer", func(e *perfexpv1alpha1.PerfExperiment) {
		e.Spec.Timeouts = &perfexpv1alpha1.Timeouts{Overall: &metav1.Duration{Duration: 720 * time.Hour}}
	})
	edit("moved", func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Queue = "elsewhere" })

	l.finishLoad("holder")
	for name, want := range map[string]struct{ reason, says string }{
		"longer": {perfexpv1alpha1.ReasonInvalidTimeouts, "spec.timeouts.overall is 720h0m0s, longer than the 192h0m0s this operator allows"},
		"moved":  {perfexpv1alpha1.ReasonQueueNotAllowed, "the spec now asks for queue elsewhere (spec.queue or spec.targetNamespace changed after the experiment joined queue recheck)"},
	} {
		got := waitPhase(t, c, ns, name, perfexpv1alpha1.PhaseFailed)
		ready := condition(got, perfexpv1alpha1.ConditionReady)
		if ready == nil || ready.Reason != want.reason || !strings.Contains(ready.Message, want.says) {
			t.Errorf("%s: Ready %+v; want %s saying %q", name, ready, want.reason, want.says)
		}
		if got.Status.StartTime != nil {
			t.Errorf("%s left the queue to run (startTime %v)", name, got.Status.StartTime)
		}
	}
	if got := l.order(); !slices.Equal(got, []string{"holder"}) {
		t.Errorf("ran %v, want only the holder", got)
	}
}
