// The report's section on workloads: CPU and memory per service, with the baseline's and the
// change where there is one.

package report

import (
	"fmt"
	"strconv"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// workloads has the services' CPU, then their memory; with a baseline, each table has the
// change of the workload's average against it.
func (m *markdown) workloads(workloads []result.WorkloadResult, c *result.Comparison) {
	if len(workloads) == 0 {
		return
	}
	deltas := newWorkloadDeltas(c)
	m.printf("## Services: CPU\n\nCores, summed over the workload's pods (sidecars included); average and highest of %s rates. ", "per-step")
	m.printf("Pods is the most pods running at once (a pod counts while its cAdvisor samples are fresh; more seen in the window are in brackets). ")
	m.printf("%% of limit is the busiest pod's average as a share of its own limit, containers of the pod template only.")
	deltas.intro(m)
	m.printf("\n\n| Workload | Pods | CPU avg | CPU max | %% of request | %% of limit | Throttled %%%s |\n|---|---:|---:|---:|---:|---:|---:%s\n", deltas.header(), deltas.rule())
	var sidecars []string
	for _, wl := range workloads {
		pods := strconv.Itoa(wl.Pods)
		if wl.PodsSeen > wl.Pods {
			pods += fmt.Sprintf(" (%d)", wl.PodsSeen)
		}
		if mc, ok := deltas.find(wl, result.MetricCPU); ok && mc.BaselinePods != wl.Pods {
			pods += fmt.Sprintf(", baseline %d", mc.BaselinePods)
		}
		m.printf("| %s | %s | %s | %s | %s | %s | %s%s |\n", workloadName(wl), pods, num(wl.CPUAvg, 3), num(wl.CPUMax, 3),
			noteOr(num(wl.CPUPercentOfRequest, 1), wl.CPURequestNote), noteOr(num(wl.CPUPercentOfLimit, 1), wl.CPULimitNote), num(wl.CPUThrottledPercent, 1),
			deltas.cells(wl, result.MetricCPU, m.notes))
		if len(wl.Sidecars) > 0 {
			sidecars = append(sidecars, fmt.Sprintf("%s (%s)", wl.Name, strings.Join(wl.Sidecars, ", ")))
		}
	}
	if len(sidecars) > 0 {
		m.printf("\nContainers not in the pod template (injected sidecars) count in CPU and memory use but not in requests, limits or %% of limit: %s.\n", strings.Join(sidecars, "; "))
	}
	m.printf("\n## Services: memory\n\nWorking set, summed over the workload's pods. Max adds up each container's peak within each rate window (`max_over_time`), so no spike between two steps is missed; ")
	m.printf("when containers peak at different moments it is an upper bound of the highest total. %% of limit is the highest peak of any one pod as a share of its own limit.")
	deltas.intro(m)
	m.printf("\n\n| Workload | Avg | Max | %% of limit (peak) | Growth per hour | Leak | Restarts | OOM kills%s |\n|---|---:|---:|---:|---:|---|---:|---:%s\n", deltas.header(), deltas.rule())
	for _, wl := range workloads {
		m.printf("| %s | %s | %s | %s | %s | %s | %s | %s%s |\n", workloadName(wl), mib(wl.MemoryAvg), mib(wl.MemoryMax),
			noteOr(num(wl.MemoryPercentOfLimit, 1), wl.MemoryLimitNote), signedBytes(wl.MemoryGrowthPerHour), orDash(wl.Leak), intOr(wl.Restarts), intOr(wl.OOMKills),
			deltas.cells(wl, result.MetricMemory, m.notes))
	}
	m.printf("\n")
}

// workloadDeltas are a comparison's rows of workloads' CPU and memory, for the Services tables.
type workloadDeltas struct {
	c *result.Comparison
	// rows are the indexes of the workloads' rows in c.Metrics, by workload and kind.
	rows map[string]int
}

func newWorkloadDeltas(c *result.Comparison) workloadDeltas {
	d := workloadDeltas{c: c, rows: map[string]int{}}
	if c == nil {
		return d
	}
	for i, mc := range c.Metrics {
		if mc.Workload != "" {
			d.rows[mc.Workload+" "+string(mc.Kind)] = i
		}
	}
	return d
}

func (d workloadDeltas) find(wl result.WorkloadResult, kind perfexpv1alpha1.ObjectiveMetric) (result.MetricComparison, bool) {
	i, ok := d.index(wl, kind)
	if !ok {
		return result.MetricComparison{}, false
	}
	return d.c.Metrics[i], true
}

// index is the position of a workload's row of kind among the comparison's metrics.
func (d workloadDeltas) index(wl result.WorkloadResult, kind perfexpv1alpha1.ObjectiveMetric) (int, bool) {
	i, ok := d.rows[wl.Kind+"/"+wl.Namespace+"/"+wl.Name+" "+string(kind)]
	return i, ok
}

// workloadRows counts a comparison's workload rows.
func workloadRows(c *result.Comparison) int {
	n := 0
	for _, mc := range c.Metrics {
		if mc.Workload != "" {
			n++
		}
	}
	return n
}

func (d workloadDeltas) intro(m *markdown) {
	if len(d.rows) == 0 {
		return
	}
	m.printf(" Δ is the change of the average against baseline %s with its 95 %% interval, judged by the comparison's rule (±%g %%); a workload the variant scaled is compared on its totals, and its baseline's pods are shown beside its own.",
		d.c.Baseline, d.c.MinChangePercent)
}

func (d workloadDeltas) header() string {
	if len(d.rows) == 0 {
		return ""
	}
	return " | Δ vs baseline [95 % interval] | Verdict"
}

func (d workloadDeltas) rule() string {
	if len(d.rows) == 0 {
		return "|"
	}
	return "|---|---|"
}

// cells are the Δ and verdict cells of a workload's row, its verdict with the numbers of its
// reasons' notes; a dash for a workload the baseline did not have.
func (d workloadDeltas) cells(wl result.WorkloadResult, kind perfexpv1alpha1.ObjectiveMetric, n *notes) string {
	if len(d.rows) == 0 {
		return ""
	}
	i, ok := d.index(wl, kind)
	if !ok {
		return " | - | not in the baseline"
	}
	mc := d.c.Metrics[i]
	return fmt.Sprintf(" | %s | %s", changeCell(mc), string(mc.Change)+n.mark(i))
}
