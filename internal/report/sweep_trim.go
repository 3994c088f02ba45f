package report

import (
	"fmt"
	"slices"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// sweepTrimSteps are the workloads each arm keeps in the per-arm tables, tried in turn until the
// sweep report fits a ConfigMap (-1 keeps them all, 0 drops the per-arm tables altogether): a
// sweep of 32 arms and 200 workloads holds far more than one run's report.
var sweepTrimSteps = []int{-1, 40, 20, 10, 0}

// SweepConfigMapData renders the sweep report's documents (report.md, results.json,
// report.html). When they would not fit a ConfigMap, the Services tables keep the workloads
// that moved the most, then the per-arm tables are left out, and the report says so; the table
// of arms and every arm's comparison are published whatever its size.
func SweepConfigMapData(r *SweepResult) (map[string]string, error) {
	for _, keep := range sweepTrimSteps {
		rr := trimSweep(r, keep)
		js, err := SweepJSON(rr)
		if err != nil {
			return nil, err
		}
		page, err := SweepHTML(rr)
		if err != nil {
			return nil, err
		}
		data := map[string]string{KeySweepMarkdown: SweepMarkdown(rr), KeySweepJSON: string(js), KeySweepHTML: page}
		if dataSize(data) <= MaxConfigMapBytes {
			return data, nil
		}
	}
	return nil, fmt.Errorf("the sweep report does not fit a ConfigMap even without its per-arm tables")
}

// trimSweep is r with the Services tables of the keep workloads that moved the most (each arm's
// statistics of the others dropped too), or with no per-arm tables for keep 0; r itself for -1.
func trimSweep(r *SweepResult, keep int) *SweepResult {
	if keep < 0 {
		return r
	}
	c := *r
	c.Arms = slices.Clone(r.Arms)
	c.Notes = slices.Clone(r.Notes)
	if keep == 0 {
		for i := range c.Arms {
			c.Arms[i].Transactions, c.Arms[i].Workloads, c.Arms[i].Queries, c.Arms[i].Routes = nil, nil, nil, nil
		}
		c.Report = &perfexpv1alpha1.SweepReport{}
		c.Notes = append(c.Notes, "the report was too large for a ConfigMap: its per-arm tables (transactions, services, routes, queries) are left out; each arm's comparison in results.json still holds their changes and verdicts")
		return &c
	}
	qs := workloadQuantities(r)
	if len(qs) <= keep {
		return r
	}
	kept := map[string]bool{}
	for _, q := range qs[:keep] {
		kept[q.ref] = true
	}
	for i := range c.Arms {
		c.Arms[i].Workloads = slices.DeleteFunc(slices.Clone(c.Arms[i].Workloads), func(w SweepWorkloadStats) bool { return !kept[w.Ref()] })
	}
	c.Notes = append(c.Notes, fmt.Sprintf("the report was too large for a ConfigMap: the Services tables keep the %d of %d workloads that moved the most; each arm's comparison in results.json still holds every workload's change and verdict", keep, len(qs)))
	return &c
}
