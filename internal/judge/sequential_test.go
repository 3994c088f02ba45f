package judge

import (
	"fmt"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge/stats"
	"github.com/perfexp/perfexp/internal/result"
)

// scripted is a judge whose arms' headlines follow a script per number of blocks; it records
// which arms each look judged.
type scripted struct {
	changes map[int]map[int]perfexpv1alpha1.Change // arm -> blocks -> headline
	judged  map[int][]int                          // blocks -> arms judged
}

func (s *scripted) judge(_ stats.Look, n int, arms []int) []*result.Comparison {
	if s.judged == nil {
		s.judged = map[int][]int{}
	}
	s.judged[n] = append(s.judged[n], arms...)
	out := make([]*result.Comparison, len(arms))
	for i, a := range arms {
		ch, ok := s.changes[a][n]
		if !ok {
			ch = perfexpv1alpha1.ChangeInconclusive
		}
		out[i] = &result.Comparison{Change: ch, Message: fmt.Sprintf("arm %d on %d blocks", a, n)}
	}
	return out
}

func TestDecideArms(t *testing.T) {
	st := stats.Stopping{First: 2, Max: 6}
	tests := []struct {
		name    string
		blocks  int
		stopped []int
		changes map[int]map[int]perfexpv1alpha1.Change
		want    []ArmDecision // Comparison.Change and Blocks compared
		judged  map[int][]int
	}{
		{
			name:   "an arm decided at a look keeps that look's verdict and is not judged again",
			blocks: 5,
			changes: map[int]map[int]perfexpv1alpha1.Change{
				// arm 0 is Regressed on 2 blocks and would read Inconclusive on 3 or more;
				// arm 1 is decided on 4; arm 2 never.
				0: {2: perfexpv1alpha1.ChangeRegressed},
				1: {4: perfexpv1alpha1.ChangeNoMeaningfulChange, 5: perfexpv1alpha1.ChangeInconclusive},
			},
			want: []ArmDecision{
				{Comparison: &result.Comparison{Change: perfexpv1alpha1.ChangeRegressed}, Blocks: 2, Decided: true},
				{Comparison: &result.Comparison{Change: perfexpv1alpha1.ChangeNoMeaningfulChange}, Blocks: 4, Decided: true},
				{Comparison: &result.Comparison{Change: perfexpv1alpha1.ChangeInconclusive}, Blocks: 5},
			},
			judged: map[int][]int{2: {0, 1, 2}, 3: {1, 2}, 4: {1, 2}, 5: {2}},
		},
		{
			name:    "a recorded stop holds even where the replay would decide otherwise",
			blocks:  4,
			stopped: []int{3, 0},
			changes: map[int]map[int]perfexpv1alpha1.Change{
				0: {2: perfexpv1alpha1.ChangeImproved, 3: perfexpv1alpha1.ChangeRegressed},
			},
			want: []ArmDecision{
				{Comparison: &result.Comparison{Change: perfexpv1alpha1.ChangeRegressed}, Blocks: 3, Decided: true},
				{Comparison: &result.Comparison{Change: perfexpv1alpha1.ChangeInconclusive}, Blocks: 4},
			},
			judged: map[int][]int{2: {0, 1}, 3: {0, 1}, 4: {1}},
		},
		{
			name:   "every arm decided at the first look ends the replay",
			blocks: 4,
			changes: map[int]map[int]perfexpv1alpha1.Change{
				0: {2: perfexpv1alpha1.ChangeImproved},
			},
			want:   []ArmDecision{{Comparison: &result.Comparison{Change: perfexpv1alpha1.ChangeImproved}, Blocks: 2, Decided: true}},
			judged: map[int][]int{2: {0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scripted{changes: tt.changes}
			got := DecideArms(st, tt.blocks, tt.stopped, len(tt.want), s.judge)
			for i, w := range tt.want {
				g := got[i]
				if g.Comparison == nil || g.Comparison.Change != w.Comparison.Change || g.Blocks != w.Blocks || g.Decided != w.Decided {
					t.Errorf("arm %d: got %+v (%v), want %s on %d blocks, decided %v", i, g, g.Comparison, w.Comparison.Change, w.Blocks, w.Decided)
				}
			}
			if fmt.Sprint(s.judged) != fmt.Sprint(tt.judged) {
				t.Errorf("judged %v, want %v", s.judged, tt.judged)
			}
		})
	}
}

// An arm decided without a claim keeps its share of the error rate: its primary metrics stay in
// the Holm family of later looks (Look.Held); an arm decided with a claim passes its share on.
func TestDecideArmsHoldsUnclaimedShares(t *testing.T) {
	st := stats.Stopping{First: 2, Max: 4}
	held := map[int]int{}
	row := func(ch perfexpv1alpha1.Change) result.MetricComparison {
		return result.MetricComparison{Metric: "s p95", Primary: true, PBeyond: result.Num(0.5), Change: ch}
	}
	DecideArms(st, 4, nil, 3, func(look stats.Look, n int, arms []int) []*result.Comparison {
		held[n] = look.Held
		out := make([]*result.Comparison, len(arms))
		for i, a := range arms {
			ch := perfexpv1alpha1.ChangeInconclusive
			switch {
			case a == 0 && n == 2:
				ch = perfexpv1alpha1.ChangeNoMeaningfulChange
			case a == 1 && n == 3:
				ch = perfexpv1alpha1.ChangeRegressed
			}
			out[i] = &result.Comparison{Change: ch, Metrics: []result.MetricComparison{row(ch)}}
		}
		return out
	})
	if held[2] != 0 || held[3] != 1 || held[4] != 1 {
		t.Errorf("held by look: %v, want none at the first, then the NoMeaningfulChange arm's one metric (the Regressed arm's is passed on)", held)
	}
	// Holm counts them with a p-value of 1: one p of 0.01 among 1 + 3 held is adjusted to 0.04.
	c := &result.Comparison{Change: perfexpv1alpha1.ChangeRegressed, Metrics: []result.MetricComparison{
		{Metric: "s p95", Primary: true, PBeyond: result.Num(0.01), Unadjusted: perfexpv1alpha1.ChangeRegressed}}}
	AdjustArmsLook([]*result.Comparison{c}, stats.Look{K: 8, Max: 8, First: 3, Held: 3})
	if got := *c.Metrics[0].AdjustedP; got != 0.04 {
		t.Errorf("adjusted p %.4g, want 0.04", got)
	}
}
