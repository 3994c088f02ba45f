package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// oracle answers a bisect's steps from a known truth: the culprits' slowdowns, and optionally
// an interaction (a set of services that slows the system only when all are applied).
type oracle struct {
	culprits    map[string]bool
	interaction []string
}

func (o oracle) outcome(set []string) BisectOutcome {
	for _, s := range set {
		if o.culprits[s] {
			return BisectReproduces
		}
	}
	if len(o.interaction) > 0 && !slices.ContainsFunc(o.interaction, func(s string) bool { return !slices.Contains(set, s) }) {
		return BisectReproduces
	}
	return BisectClean
}

// runBisect plays a bisect to its end against an answer function and returns its answer and
// steps.
func runBisect(services []string, answer func([]string) BisectOutcome) (BisectAnswer, []BisectStep) {
	var steps []BisectStep
	for range 200 {
		a := BisectNext(services, steps)
		if a.Done {
			return a, steps
		}
		steps = append(steps, BisectStep{Set: a.Next, Outcome: answer(a.Next)})
	}
	panic("the bisect did not end")
}

//nolint:unparam // a bisect of any size; these tests play eight services, the simulation (package judge) thirty
func services(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("svc-%02d", i)
	}
	return out
}

func TestBisectNext(t *testing.T) {
	eight := services(8)
	tests := []struct {
		name        string
		o           oracle
		want        []string
		interaction bool
		maxSteps    int
		why         string
	}{
		{"one culprit", oracle{culprits: map[string]bool{"svc-05": true}}, []string{"svc-05"}, false, 7, "alone reproduces"},
		{"two culprits in different halves", oracle{culprits: map[string]bool{"svc-01": true, "svc-06": true}}, []string{"svc-01", "svc-06"}, false, 13, "each reproduce"},
		{"two culprits in one half", oracle{culprits: map[string]bool{"svc-00": true, "svc-01": true}}, []string{"svc-00", "svc-01"}, false, 11, "each reproduce"},
		{"an interaction across the halves", oracle{interaction: []string{"svc-02", "svc-05"}}, []string{"svc-02", "svc-05"}, true, 15, "together"},
		{"no regression at all", oracle{}, nil, false, 1, "nothing to bisect"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, steps := runBisect(eight, tc.o.outcome)
			if !slices.Equal(a.Culprits, tc.want) || a.Interaction != tc.interaction {
				t.Fatalf("culprits %v interaction %v, want %v %v (%s)", a.Culprits, a.Interaction, tc.want, tc.interaction, a.Why)
			}
			if len(steps) > tc.maxSteps {
				t.Errorf("%d steps, want at most %d", len(steps), tc.maxSteps)
			}
			if !strings.Contains(a.Why, tc.why) {
				t.Errorf("why %q, want %q", a.Why, tc.why)
			}
		})
	}
}

func TestBisectStopsAtAnUndecidedStep(t *testing.T) {
	o := oracle{culprits: map[string]bool{"svc-05": true}}
	a, _ := runBisect(services(8), func(set []string) BisectOutcome {
		if len(set) == 2 {
			return BisectUndecided
		}
		return o.outcome(set)
	})
	if len(a.Culprits) != 0 || !strings.Contains(a.Why, "no comparison to go by") {
		t.Fatalf("answer %+v, want no culprit named and the undecided step said", a)
	}
}

func TestBisectReplaysTheSameStep(t *testing.T) {
	// The next step depends only on the steps so far, in whatever order they are listed.
	o := oracle{culprits: map[string]bool{"svc-03": true}}
	_, steps := runBisect(services(8), o.outcome)
	shuffled := slices.Clone(steps[:4])
	slices.Reverse(shuffled)
	if a, b := BisectNext(services(8), steps[:4]), BisectNext(services(8), shuffled); !slices.Equal(a.Next, b.Next) {
		t.Fatalf("next %v, and %v with the steps reversed", a.Next, b.Next)
	}
}
