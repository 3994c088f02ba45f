package judge

import (
	"fmt"
	"math"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/result"
)

// TestNodeLoadWidensSingleRunIntervals: a comparison whose two runs had node loads further apart
// than the limit widens every interval by the share of the node the busier run lost, says
// which run was busier, and still claims a change far larger than that.
func TestNodeLoadWidensSingleRunIntervals(t *testing.T) {
	quiet, busy := &result.NodeLoad{OtherCores: 0.1, Cores: 2}, &result.NodeLoad{OtherCores: 0.9, Cores: 2}
	cases := []struct {
		name      string
		cur, base *result.NodeLoad
		bound     float64 // percent
		busier    string
	}{
		{"both quiet: 0.2 apart, a tenth of 2 cores", quiet, &result.NodeLoad{OtherCores: 0.3, Cores: 2}, 0, ""},
		{"0.3 apart on 2 cores", quiet, &result.NodeLoad{OtherCores: 0.4, Cores: 2}, 15, "during the baseline"},
		{"0.3 apart on 4 cores is within a tenth", &result.NodeLoad{OtherCores: 0.1, Cores: 4}, &result.NodeLoad{OtherCores: 0.4, Cores: 4}, 0, ""},
		{"cores unknown: a quarter of a core, 2.5 cores assumed", &result.NodeLoad{OtherCores: 0.1}, &result.NodeLoad{OtherCores: 0.4}, 12, "during the baseline"},
		{"busy baseline", quiet, busy, 40, "during the baseline"},
		{"busy run", busy, quiet, 40, "during this run"},
		{"baseline's load unknown", quiet, nil, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			why, bound := nodeLoadBias(tc.cur, tc.base, 0)
			if got := 100 * math.Expm1(bound); math.Abs(got-tc.bound) > 0.05 || !strings.Contains(why, tc.busier) {
				t.Fatalf("bound %.2f %%, want %.2f; why %q", got, tc.bound, why)
			}
			if why != "" && !strings.Contains(why, fmt.Sprintf("±%.1f %%", tc.bound)) {
				t.Errorf("why %q does not say the bound", why)
			}
		})
	}
	// The demo's case: removing CPU limits took p95 down 47 % [-59, -19] while the node was
	// 0.26 cores busier (2 cores): the widened interval still lies below -5 %.
	e := &effect{logScale: true, point: math.Log(0.53), low: math.Log(0.41), high: math.Log(0.81)}
	e.up, e.down, _ = thresholds(perfexpv1alpha1.MetricP95, 5, 0)
	_, bound := nodeLoadBias(&result.NodeLoad{OtherCores: 0.36, Cores: 2}, &result.NodeLoad{OtherCores: 0.1, Cores: 2}, 0)
	e.addBias(bound, "busier")
	if got, _ := decide(e, perfexpv1alpha1.MetricP95, "intervals"); got != perfexpv1alpha1.ChangeImproved {
		t.Errorf("-47 %% beside a 0.26-core busier node: %s [%+.1f, %+.1f]", got, 100*math.Expm1(e.low), 100*math.Expm1(e.high))
	}
	// +8 % [+4, +12] beside the same node: the neighbour could have caused it.
	e = &effect{logScale: true, point: math.Log(1.08), low: math.Log(1.04), high: math.Log(1.12)}
	e.up, e.down, _ = thresholds(perfexpv1alpha1.MetricP95, 5, 0)
	e.addBias(bound, "busier")
	if got, _ := decide(e, perfexpv1alpha1.MetricP95, "intervals"); got != perfexpv1alpha1.ChangeInconclusive {
		t.Errorf("+8 %% beside a 0.26-core busier node: %s", got)
	}
}
