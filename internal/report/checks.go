package report

import (
	"github.com/perfexp/perfexp/internal/result"
)

// checksAndCounters writes the "Iterations and checks" section: each scenario's iteration
// duration, its k6 checks (those below 100 % marked), and the custom Counters, Rates and
// Gauges its script defines. Parts with no rows are left out; the section too when all are.
func (m *markdown) checksAndCounters(scenarios []result.ScenarioResult) {
	var iters, checks, counters bool
	for _, s := range scenarios {
		iters = iters || s.IterationDuration != nil
		checks = checks || len(s.Checks) > 0
		counters = counters || len(s.Counters) > 0 || len(s.Rates) > 0 || len(s.Gauges) > 0
	}
	if !iters && !checks && !counters {
		return
	}
	m.printf("## Iterations and checks\n\n")
	if iters {
		m.printf("Iteration duration: one whole run of the scenario's function (k6's iteration_duration), in milliseconds, over the iterations that ended in the window. ")
		m.printf("The average is exact; percentiles lie within the histogram's bucket bound; max is an upper bound.\n\n")
		m.printf("| Scenario | Iterations | Avg | p50 | p75 | p90 | p95 | Max |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range scenarios {
			if s.IterationDuration != nil {
				m.printf("| %s | %s | %s |\n", cell(s.Name), intOr(s.Iterations), distributionCells(*s.IterationDuration))
			}
		}
		m.printf("\n")
	}
	if checks {
		m.printf("Checks: the pass rate of each k6 `check()`. k6 writes it as a ratio since each runner began, without counts: the lowest runner's is shown, warm-up included. ")
		m.printf("100 %% means no check failed on any runner; a check below it is marked **failing**.\n\n")
		m.printf("| Scenario | Check | Pass rate (%%) | |\n|---|---|---:|---|\n")
		for _, s := range scenarios {
			for _, c := range s.Checks {
				mark := ""
				if c.PassPercent != nil && *c.PassPercent < 100 {
					mark = "**failing**"
				}
				m.printf("| %s | %s | %s | %s |\n", cell(s.Name), cell(c.Name), passCell(c.PassPercent), mark)
			}
		}
		m.printf("\n")
	}
	if counters {
		m.printf("Custom Counters (`new Counter(name)`): what the script added in the window, exact, summed over runners. ")
		m.printf("Custom Rates (`new Rate(name)`): the share of true values, as checks are (lowest runner, since it began). ")
		m.printf("Custom Gauges (`new Gauge(name)`): the last value in the window (when one runner wrote it), and the lowest and highest k6 pushed.\n\n")
		m.printf("| Scenario | Metric | Kind | Value | Per second | Min | Max |\n|---|---|---|---:|---:|---:|---:|\n")
		for _, s := range scenarios {
			for _, c := range s.Counters {
				m.printf("| %s | %s | Counter | %s | %s | - | - |\n", cell(s.Name), cell(c.Name), withUnit(c.Total, ""), num(c.Rate, 2))
			}
			for _, r := range s.Rates {
				m.printf("| %s | %s | Rate | %s | - | - | - |\n", cell(s.Name), cell(r.Name), withUnit(r.Percent, "%"))
			}
			for _, g := range s.Gauges {
				m.printf("| %s | %s | Gauge | %s | - | %s | %s |\n", cell(s.Name), cell(g.Name), withUnit(g.Last, ""), withUnit(g.Min, ""), withUnit(g.Max, ""))
			}
		}
		m.printf("\n")
	}
}

// passCell renders a pass rate with two decimals, never rounding a failing check up to 100.
func passCell(v *float64) string {
	if v != nil && *v < 100 && *v >= 99.995 {
		return "<100.00"
	}
	return num(v, 2)
}
