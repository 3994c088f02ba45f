package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// workloadMetrics are compared for every workload, in the report's order.
var workloadMetrics = []perfexpv1alpha1.ObjectiveMetric{result.MetricCPU, result.MetricMemory}

// noWorkloadIntervals is why a single-run comparison of a workload cannot be made against a
// baseline analysed before results kept per-interval CPU and memory.
const noWorkloadIntervals = "the baseline's results hold no per-interval CPU and memory (analysed by an older perfexp); compare repeated runs, or run the baseline again"

// findWorkloadResult is a workload of a result matched by kind, namespace and name.
func findWorkloadResult(r *result.Result, w result.WorkloadResult) *result.WorkloadResult {
	if r == nil {
		return nil
	}
	for i := range r.Workloads {
		if b := &r.Workloads[i]; b.Kind == w.Kind && b.Namespace == w.Namespace && b.Name == w.Name {
			return b
		}
	}
	return nil
}

// workloadValue is a workload's mean CPU (cores, or percent of its request) or memory (MiB, the
// unit comparisons show).
func workloadValue(w *result.WorkloadResult, m perfexpv1alpha1.ObjectiveMetric) *float64 {
	if w == nil {
		return nil
	}
	switch m {
	case result.MetricCPU:
		return w.CPUAvg
	case result.MetricCPUPercentOfRequest:
		return w.CPUPercentOfRequest
	}
	if w.MemoryAvg == nil {
		return nil
	}
	return result.Num(*w.MemoryAvg / (1 << 20))
}

// newWorkloadComparison is the row of one workload's metric, with both runs' values and pods.
// A variant that scaled the workload is compared on the totals (what the service costs), and
// Pods beside BaselinePods makes the scaling visible.
func newWorkloadComparison(w, bw *result.WorkloadResult, m perfexpv1alpha1.ObjectiveMetric, o CompareOptions) result.MetricComparison {
	mc := result.MetricComparison{Metric: fmt.Sprintf("%s/%s %s", w.Namespace, w.Name, workloadWhat(m)), Kind: m, Unit: metricUnit(m),
		Workload: workloadRef(w.Kind, w.Namespace, w.Name), Pods: w.Pods, BaselinePods: bw.Pods,
		Primary: o.primaryWorkload(w.Kind, w.Namespace, w.Name, m).ok}
	mc.Value, mc.Baseline = workloadValue(w, m), workloadValue(bw, m)
	fillDelta(&mc)
	return mc
}

// workloadWhat names a workload metric in a row's label.
func workloadWhat(m perfexpv1alpha1.ObjectiveMetric) string {
	switch m {
	case result.MetricMemory:
		return "memory avg"
	case result.MetricCPUPercentOfRequest:
		return "cpu % of request"
	}
	return "cpu avg"
}

// intervalValues are a workload's per-interval values of a metric: CPU as a share of the
// request is its CPU over the run's total request (constant within a run), nil without one.
func intervalValues(iv *result.WorkloadIntervals, w *result.WorkloadResult, m perfexpv1alpha1.ObjectiveMetric) []float64 {
	if m != result.MetricCPUPercentOfRequest {
		return iv.Values(m)
	}
	if w.CPURequest == nil || *w.CPURequest <= 0 {
		return nil
	}
	cpu := iv.Values(result.MetricCPU)
	out := make([]float64, len(cpu))
	for i, v := range cpu {
		out[i] = 100 * v / *w.CPURequest
	}
	return out
}

// noRequestWhy is why CPU as a share of the request is not compared.
const noRequestWhy = "no CPU request on it in one of the runs: a share of the request needs one (compare CPU in cores)"

// orientWorkload turns a workload row's verdict (lower is better) to a primary metric's direction.
func (o CompareOptions) orientWorkload(w *result.WorkloadResult, mc *result.MetricComparison) {
	if p := o.primaryWorkload(w.Kind, w.Namespace, w.Name, mc.Kind); p.ok {
		reorient(mc, betterLower, p.dir)
	}
}

// missingWorkloadRows are the Unknown rows of the primary metrics naming a workload that no row
// of out is: one the runs did not report (or not on both sides).
func missingWorkloadRows(out []result.MetricComparison, cur, base []*result.Result, o CompareOptions) []result.MetricComparison {
	var missing []result.MetricComparison
	for _, p := range o.Primary {
		if p.Workload == nil || p.Route != "" {
			continue
		}
		pw := *p.Workload
		if slices.ContainsFunc(out, func(mc result.MetricComparison) bool {
			parts := strings.SplitN(mc.Workload, "/", 3)
			return mc.Kind == p.Metric && len(parts) == 3 && namesWorkload(pw, parts[0], parts[1], parts[2])
		}) {
			continue
		}
		has := func(rs []*result.Result) bool {
			return slices.ContainsFunc(rs, func(r *result.Result) bool {
				return slices.ContainsFunc(r.Workloads, func(w result.WorkloadResult) bool { return namesWorkload(pw, w.Kind, w.Namespace, w.Name) })
			})
		}
		kind := pw.Kind
		if kind == "" {
			kind = perfexpv1alpha1.WorkloadKindDeployment
		}
		ref := string(kind) + "/" + pw.Name
		if pw.Namespace != "" {
			ref = workloadRef(string(kind), pw.Namespace, pw.Name)
		}
		mc := result.MetricComparison{Metric: ref + " " + workloadWhat(p.Metric), Kind: p.Metric, Unit: metricUnit(p.Metric), Workload: ref, Primary: true}
		setUnknown(&mc, missingWhy("workload "+ref, has(cur), has(base), len(cur) > 1 || len(base) > 1))
		missing = append(missing, mc)
	}
	return missing
}

// workloadRef names a workload as comparisons do: "Deployment/shop/api".
func workloadRef(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// workloadRows compare every workload found in both single runs on its per-interval CPU and
// memory, with the moving-block bootstrap of the latencies.
func workloadRows(r, base *result.Result, cur, baseIv *result.IntervalData, o CompareOptions, widen func(string, *effect) *effect, seed ...string) []result.MetricComparison {
	var out []result.MetricComparison
	for i := range r.Workloads {
		w := &r.Workloads[i]
		bw := findWorkloadResult(base, *w)
		if bw == nil {
			continue
		}
		for _, m := range o.primaryWorkloadMetrics(w.Kind, w.Namespace, w.Name) {
			mc := newWorkloadComparison(w, bw, m, o)
			ci, bi := cur.FindWorkload(w.Kind, w.Namespace, w.Name), baseIv.FindWorkload(w.Kind, w.Namespace, w.Name)
			switch {
			case m == result.MetricCPUPercentOfRequest && (w.CPURequest == nil || bw.CPURequest == nil):
				setUnknown(&mc, noRequestWhy)
			case mc.Value == nil || mc.Baseline == nil:
				setUnknown(&mc, "no use measured in one of the runs")
			case baseIv == nil || len(baseIv.Workloads) == 0:
				setUnknown(&mc, noWorkloadIntervals)
			case ci == nil || bi == nil:
				setUnknown(&mc, "no per-interval CPU and memory for it in one of the runs")
			default:
				vc, vb := intervalValues(ci, w, m), intervalValues(bi, bw, m)
				e := meanBootstrap(vc, vb, o.MinChangePercent, o.Resamples,
					seedOf(append(seed, mc.Workload, string(m))...))
				if e == nil {
					setUnknown(&mc, whyNoUse(vc, vb))
					break
				}
				fill(&mc, widen(WorkloadNoiseKey(mc.Workload, cpuNoise(m)), e), result.MethodBlockBootstrap, "intervals")
				o.orientWorkload(w, &mc)
			}
			out = append(out, mc)
		}
	}
	return append(out, missingWorkloadRows(out, []*result.Result{r}, []*result.Result{base}, o)...)
}

// cpuNoise is the metric whose between-run noise a workload metric holds: CPU's, for CPU as a
// share of a request that does not change within a configuration.
func cpuNoise(m perfexpv1alpha1.ObjectiveMetric) perfexpv1alpha1.ObjectiveMetric {
	if m == result.MetricCPUPercentOfRequest {
		return result.MetricCPU
	}
	return m
}

// workloadRunRows compare every workload found in the first run of each side on the runs' mean
// CPU and memory as latencies are: paired within a blocked design's blocks (counted in *paired,
// or why not in *unpaired), else Welch's t on their logs.
func workloadRunRows(cur, base []*result.Result, o CompareOptions, paired *int, unpaired *string) []result.MetricComparison {
	var out []result.MetricComparison
	for i := range cur[0].Workloads {
		w := &cur[0].Workloads[i]
		bw := findWorkloadResult(base[0], *w)
		if bw == nil {
			continue
		}
		for _, m := range o.primaryWorkloadMetrics(w.Kind, w.Namespace, w.Name) {
			mc := newWorkloadComparison(w, bw, m, o)
			vc, pc := workloadRunValues(cur, *w, m)
			vb, pb := workloadRunValues(base, *w, m)
			mc.Value, mc.Baseline, mc.Pods, mc.BaselinePods = mean(vc), mean(vb), pc, pb
			mc.Delta, mc.DeltaPercent = nil, nil
			fillDelta(&mc)
			switch {
			case m == result.MetricCPUPercentOfRequest && len(vc)+len(vb) == 0:
				setUnknown(&mc, noRequestWhy)
			case len(vc) < len(cur) || len(vb) < len(base):
				setUnknown(&mc, fmt.Sprintf("only %d of %d runs and %d of %d baseline runs have it", len(vc), len(cur), len(vb), len(base)))
			default:
				e, method := pairedOrNot(cur, base, row{workload: workloadKey{w.Kind, w.Namespace, w.Name}, kind: m}, o, unpaired)
				if e == nil {
					e = runEffect(vc, vb, m, o.MinChangePercent)
				} else {
					*paired++
				}
				fill(&mc, e.atLevel(o.alpha()), method, "runs")
				o.orientWorkload(w, &mc)
			}
			out = append(out, mc)
		}
	}
	return append(out, missingWorkloadRows(out, cur, base, o)...)
}

// workloadRunValues is the workload's metric in each run that has it, and the most pods any
// of those runs had.
func workloadRunValues(rs []*result.Result, w result.WorkloadResult, m perfexpv1alpha1.ObjectiveMetric) ([]float64, int) {
	var out []float64
	pods := 0
	for _, r := range rs {
		rw := findWorkloadResult(r, w)
		if v := workloadValue(rw, m); v != nil && result.Finite(*v) {
			out = append(out, *v)
			pods = max(pods, rw.Pods)
		}
	}
	return out, pods
}

// whyNoUse says why two runs' per-interval values gave no comparison: either run has no value
// inside its measured window (the first minute of a run is the rate window, so a run shorter
// than that has none, though its average over the whole run may be shown), or no use at all.
func whyNoUse(cur, base []float64) string {
	if len(present(cur)) == 0 || len(present(base)) == 0 {
		return "no per-interval value inside the measured window in one of the runs (the first minute is the rate window: measure at least 3 minutes, or repeat the runs)"
	}
	return "no use measured in one of the runs"
}

// meanBootstrap estimates the change of the mean of per-interval values between two single
// runs (log of the ratio of the means) with the moving-block bootstrap the latencies use:
// circular blocks of about sqrt(n) neighbouring intervals, drawn with replacement from each run
// independently, and the same correction of the interval's width for few intervals. Intervals
// without a value are left out. It returns nil when either run has no use at all.
func meanBootstrap(cur, base []float64, minChange float64, resamples int, seed uint64) *effect {
	c, b := present(cur), present(base)
	mc, mb := meanOf(c), meanOf(b)
	if len(c) == 0 || len(b) == 0 || mc <= 0 || mb <= 0 {
		return nil
	}
	up, down, _ := thresholds(result.MetricCPU, minChange, 0)
	e := &effect{logScale: true, up: up, down: down, n: len(c), baseN: len(b), point: math.Log(mc / mb)}
	if len(c) < minBootstrapIntervals || len(b) < minBootstrapIntervals {
		// The first minute of a run is the rate window, with no CPU rate inside the window.
		e.few = fmtFew(len(c), len(b), minBootstrapIntervals, "intervals with cAdvisor samples") + " (measure at least 3 minutes, or repeat the runs)"
		return e
	}
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	bc, bb := meanBlocks(c), meanBlocks(b)
	ds := make([]float64, 0, resamples)
	for range resamples {
		x, y := bc.resample(rng), bb.resample(rng)
		if x > 0 && y > 0 {
			ds = append(ds, math.Log(x/y))
		}
	}
	if len(ds) < resamples/2 {
		e.few = "too few resamples had use on both sides"
		return e
	}
	e.fromResamples(ds, bc.inflation()*bb.inflation())
	return e
}

// valueBlocks are the sums of every circular block of one run's per-interval values.
type valueBlocks struct {
	blocks
	sums []float64
}

func meanBlocks(vs []float64) *valueBlocks {
	n := len(vs)
	l := min(blockLength(n), n)
	b := &valueBlocks{blocks: blocks{n: n, length: l}, sums: make([]float64, n)}
	for i := range n {
		for j := i; j < i+l; j++ {
			b.sums[i] += vs[j%n]
		}
	}
	return b
}

// resample is the mean of ceil(n/L) blocks drawn with replacement.
func (b *valueBlocks) resample(rng *rand.Rand) float64 {
	k := (b.n + b.length - 1) / b.length
	var s float64
	for range k {
		s += b.sums[rng.IntN(b.n)]
	}
	return s / float64(k*b.length)
}

func present(vs []float64) []float64 {
	out := make([]float64, 0, len(vs))
	for _, v := range vs {
		if result.Finite(v) {
			out = append(out, v)
		}
	}
	return out
}

func meanOf(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}
