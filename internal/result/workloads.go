package result

import (
	"encoding/json"
	"strconv"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Workloads' CPU and memory are compared with the baseline by the rule request latencies are:
// the change of the mean, its 95 % interval, δ. They are secondary metrics unless a primary
// metric names the workload (the reference reports' findings are often there, "2-3x the CPU of
// the previous release", but a service that spends more CPU to serve the same load faster is
// not by itself a regression); the node-load and throttling checks withhold them like every
// other single-run claim.
//
// Objectives cannot name these kinds; primary metrics can (spec.analysis.primaryMetrics[].workload).
const (
	// MetricCPU is a workload's mean CPU, cores summed over its pods.
	MetricCPU = perfexpv1alpha1.MetricCPU
	// MetricCPUPercentOfRequest is MetricCPU as a share of the workload's total CPU request.
	MetricCPUPercentOfRequest = perfexpv1alpha1.MetricCPUPercentOfRequest
	// MetricMemory is a workload's mean working set, MiB summed over its pods.
	MetricMemory = perfexpv1alpha1.MetricMemory
)

// WorkloadIntervals is one workload's CPU and memory per interval of the measured window, on the
// same intervals as the latency series (IntervalData.StepSeconds), for a later single-run
// comparison. An interval without a cAdvisor sample is NaN: the first rate window of a run has
// no CPU rate that lies wholly inside the window.
type WorkloadIntervals struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// CPU is the mean of the per-step CPU rates (cores, summed over pods) within each
	// interval; Memory the mean working set (bytes, summed over pods).
	CPU    []float64 `json:"cpu"`
	Memory []float64 `json:"memory"`
}

// Values are the per-interval values of a workload metric (MetricCPU or MetricMemory).
func (w *WorkloadIntervals) Values(m perfexpv1alpha1.ObjectiveMetric) []float64 {
	if m == MetricCPU {
		return w.CPU
	}
	return w.Memory
}

// workloadIntervalsJSON is WorkloadIntervals as results.json holds it: each list as one string
// of numbers with six significant digits (cAdvisor's own precision is lower), so forty workloads
// of twenty intervals add a few kilobytes.
type workloadIntervalsJSON struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	CPU       string `json:"cpu"`
	Memory    string `json:"memory"`
}

// MarshalJSON writes the compact form.
func (w WorkloadIntervals) MarshalJSON() ([]byte, error) {
	return json.Marshal(workloadIntervalsJSON{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name, CPU: sixDigits(w.CPU), Memory: sixDigits(w.Memory)})
}

// UnmarshalJSON reads the compact form.
func (w *WorkloadIntervals) UnmarshalJSON(b []byte) error {
	var j workloadIntervalsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	out := WorkloadIntervals{Kind: j.Kind, Namespace: j.Namespace, Name: j.Name}
	var err error
	if out.CPU, err = parseNumbers(j.CPU); err != nil {
		return err
	}
	if out.Memory, err = parseNumbers(j.Memory); err != nil {
		return err
	}
	*w = out
	return nil
}

func sixDigits(vs []float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strings.Join(parts, " ")
}
