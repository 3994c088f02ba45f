package analysis

import (
	"math"
	"time"

	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/result"
)

// intervals averages every workload's per-step CPU and working set over the n intervals of
// length step from ms: interval i holds the steps in (ms+i·step, ms+(i+1)·step]. A CPU rate is
// stamped with the end of its rate window, so it lands in the interval where that window ends.
// A short window (shortWindow) has one rate, over the whole window, stamped at its end: it lands
// in the last interval, though the end may lie past it (the rest of the window is shorter than
// an interval).
func (d *workloadData) intervals(ms time.Time, step time.Duration, n int) []result.WorkloadIntervals {
	if d == nil || n <= 0 || step <= 0 {
		return nil
	}
	lo := int64(model.TimeFromUnixNano(ms.UnixNano()))
	stepMs := step.Milliseconds()
	short, end := shortWindow(d.window), lo+d.window.Milliseconds()
	perInterval := func(m map[int64]float64) []float64 {
		sums, counts := make([]float64, n), make([]float64, n)
		for ts, v := range m {
			i := int((ts-lo+stepMs-1)/stepMs) - 1
			if short && ts <= end {
				i = min(i, n-1)
			}
			if ts <= lo || i < 0 || i >= n || !result.Finite(v) {
				continue
			}
			sums[i] += v
			counts[i]++
		}
		for i := range sums {
			if counts[i] == 0 {
				sums[i] = math.NaN()
			} else {
				sums[i] /= counts[i]
			}
		}
		return sums
	}
	out := make([]result.WorkloadIntervals, 0, len(d.workloads))
	for i, w := range d.workloads {
		s := d.series[i]
		if len(s.cpu) == 0 && len(s.mem) == 0 {
			continue
		}
		out = append(out, result.WorkloadIntervals{Kind: string(w.Kind), Namespace: w.Namespace, Name: w.Name, CPU: perInterval(s.cpu), Memory: perInterval(s.mem)})
	}
	return out
}
