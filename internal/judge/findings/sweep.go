package findings

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// MaxSweepMovers is how many of the largest claimed changes across a sweep's arms its findings
// name.
const MaxSweepMovers = 6

// Arm is what the sweep's findings read of one arm: its comparison with its baseline arm (nil
// for a baseline) and its runs' results, by repeat.
type Arm struct {
	Name, Baseline string
	Comparison     *result.Comparison
	Runs           []*result.Result
}

// MarkArm records on an arm's comparison what else differed between its runs' environment and
// its baseline arm's: the first run of each side that recorded an inventory is compared. When
// neither side recorded one (runs of an older perfexp) the comparison is left unmarked.
func MarkArm(c *result.Comparison, runs, baseline []*result.Result) {
	run, base := firstInventory(runs), firstInventory(baseline)
	if run == nil && base == nil {
		return
	}
	if run == nil {
		Mark(c, nil, nil)
		return
	}
	Mark(c, run.Inventory, base)
}

func firstInventory(rs []*result.Result) *result.Result {
	for _, r := range rs {
		if r != nil && r.Inventory != nil {
			return r
		}
	}
	return nil
}

// Sweep decides a sweep report's findings: each arm's environment differences from its
// baseline arm, the runs of one arm whose environments differ (an image rolled out between two
// repeats), the hot spots (per workload, the arms it was hot in), the largest claimed changes
// across the arms, the routes whose server-side p95 changed most in any arm and the CPU-seconds per 1,000 requests per workload and arm where they differ.
func Sweep(arms []Arm) []result.Finding {
	var out []result.Finding
	for _, a := range arms {
		for _, f := range environment(a.Comparison) {
			f.Text = "Arm " + a.Name + ": " + strings.Replace(f.Text, "this run", "this arm", 1)
			out = append(out, f)
		}
		out = append(out, withinArm(a)...)
	}
	out = append(out, sweepHotSpots(arms)...)
	out = append(out, sweepMovers(arms)...)
	out = append(out, sweepRouteMovers(arms)...)
	out = append(out, sweepCost(arms)...)
	return out
}

// withinArm names what differs between the first run of an arm with an inventory and each later
// one: the repeats of one arm are meant to run the same environment.
func withinArm(a Arm) []result.Finding {
	first := firstInventory(a.Runs)
	if first == nil {
		return nil
	}
	var out []result.Finding
	for _, r := range a.Runs {
		if r == nil || r == first || r.Inventory == nil {
			continue
		}
		cs, _ := Bound(Confounds(first.Inventory, r.Inventory))
		for _, c := range cs {
			out = append(out, result.Finding{Kind: result.FindingEnvironment, Row: "Runs / " + r.Experiment,
				Text: fmt.Sprintf("Arm %s's runs %s and %s differ in %s: %s in %s, %s in %s.", a.Name, first.Experiment, r.Experiment,
					confoundWhat(c), orAbsent(c.Baseline), first.Experiment, orAbsent(c.Run), r.Experiment)})
		}
	}
	return out
}

// sweepHotSpots names each workload that was one of a run's HotSpotsNamed most severe hot
// spots, with the arms it was hot in and its figures in the first of them, then the other
// workloads above a bound in one line, so 12 arms of a platform whose services all exceed tiny
// requests stay readable.
func sweepHotSpots(arms []Arm) []result.Finding {
	type hot struct {
		arms    []string
		why, in string
	}
	byWorkload := map[string]*hot{}
	var order, also []string
	for _, a := range arms {
		for _, r := range a.Runs {
			if r == nil {
				continue
			}
			for i, hs := range rankHotSpots(r.Workloads) {
				if i >= HotSpotsNamed {
					if !slices.Contains(also, hs.name) {
						also = append(also, hs.name)
					}
					continue
				}
				h := byWorkload[hs.name]
				if h == nil {
					h = &hot{why: hs.why, in: a.Name}
					byWorkload[hs.name] = h
					order = append(order, hs.name)
				}
				if !slices.Contains(h.arms, a.Name) {
					h.arms = append(h.arms, a.Name)
				}
			}
		}
	}
	out := make([]result.Finding, 0, len(order)+1)
	for _, name := range order {
		h := byWorkload[name]
		out = append(out, result.Finding{Kind: result.FindingHotSpot, Row: "Services / " + name,
			Text: fmt.Sprintf("Hot spot in %d of %d arms (%s); in %s, %s ran with %s.", len(h.arms), len(arms), strings.Join(h.arms, ", "), h.in, name, h.why)})
	}
	also = slices.DeleteFunc(also, func(n string) bool { return byWorkload[n] != nil })
	if len(also) > 0 {
		out = append(out, result.Finding{Kind: result.FindingHotSpot, Row: "Services",
			Text: fmt.Sprintf("Also above the hot-spot bounds in some arm, less so: %s.", join(also))})
	}
	return out
}

// sweepMovers names the largest changes any arm's verdict claims, across CPU, memory and
// latency rows.
func sweepMovers(arms []Arm) []result.Finding {
	type mover struct {
		arm string
		mc  result.MetricComparison
		d   float64
	}
	var ms []mover
	for _, a := range arms {
		if a.Comparison == nil {
			continue
		}
		for _, mc := range a.Comparison.Metrics {
			if mc.Estimate == nil || mc.Low == nil || mc.High == nil || mc.Scale != result.ScalePercent ||
				(mc.Change != perfexpv1alpha1.ChangeRegressed && mc.Change != perfexpv1alpha1.ChangeImproved) {
				continue
			}
			if (mc.Workload != "" && (mc.Kind == result.MetricCPU || mc.Kind == result.MetricMemory)) || (mc.Workload == "" && mc.Kind == perfexpv1alpha1.MetricP95) {
				ms = append(ms, mover{a.Name, mc, a.Comparison.MinChangePercent})
			}
		}
	}
	slices.SortStableFunc(ms, func(x, y mover) int { return cmp.Compare(math.Abs(*y.mc.Estimate), math.Abs(*x.mc.Estimate)) })
	out := make([]result.Finding, 0, min(len(ms), MaxSweepMovers))
	for _, m := range ms[:min(len(ms), MaxSweepMovers)] {
		out = append(out, result.Finding{Kind: result.FindingMover, Row: "Arm " + m.arm + " / " + moverRow(m.mc), Text: "Arm " + m.arm + ": " + MoverText(m.mc, m.d)})
	}
	return out
}

// sweepCost gives each workload's mean CPU-seconds per 1,000 requests per arm, for the
// workloads whose figure differs by 10 % or more between two arms.
func sweepCost(arms []Arm) []result.Finding {
	type cell struct {
		arm string
		v   float64
	}
	per := map[string][]cell{}
	var order []string
	for _, a := range arms {
		sums, counts := map[string]float64{}, map[string]int{}
		var names []string
		for _, r := range a.Runs {
			if r == nil || r.Validity != perfexpv1alpha1.Valid {
				continue
			}
			for _, w := range r.Workloads {
				if v := CPUPer1000(w, r); v != nil {
					n := w.Namespace + "/" + w.Name
					if counts[n] == 0 {
						names = append(names, n)
					}
					sums[n] += *v
					counts[n]++
				}
			}
		}
		for _, n := range names {
			if _, ok := per[n]; !ok {
				order = append(order, n)
			}
			per[n] = append(per[n], cell{a.Name, sums[n] / float64(counts[n])})
		}
	}
	var parts []string
	for _, n := range order {
		cs := per[n]
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range cs {
			lo, hi = math.Min(lo, c.v), math.Max(hi, c.v)
		}
		if len(cs) < 2 || lo <= 0 || hi/lo < 1.1 {
			continue
		}
		var vs []string
		for _, c := range cs {
			vs = append(vs, fmt.Sprintf("%s %.3g s", c.arm, c.v))
		}
		parts = append(parts, n+": "+strings.Join(vs, ", "))
	}
	if len(parts) == 0 {
		return nil
	}
	return []result.Finding{{Kind: result.FindingCostPerLoad, Row: "Services",
		Text: "CPU-seconds per 1,000 requests (mean over each arm's runs; a ratio of totals with no interval, where arms differ by 10 % or more): " + strings.Join(parts, "; ") + "."}}
}
