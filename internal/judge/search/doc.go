// Package search decides the steps of the searches a PerfSweep runs: a capacity search's
// probes and a performance bisect's sets of services. It is pure; internal/sweep plans the
// runs, and each step's runs are judged with the judge's comparisons and objectives.
//
// Where each decision is made:
//   - capacity.go: a capacity search's moves (bracket by doubling, bisect: CapacitySearch.Next)
//     and whether a probe's objectives held over its runs (DecideProbe).
//   - bisect.go: a performance bisect's next set of services (BisectNext) and what a step's
//     comparison means for it (BisectOutcomeOf).
package search
