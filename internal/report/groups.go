package report

import (
	"fmt"

	"github.com/perfexp/perfexp/internal/result"
)

// transactions writes the "Transactions" section (each scenario's k6 groups, the workflow-level
// times a reference report leads with) and the "Custom metrics" section (the script's own
// Trends). Either is left out when no scenario has rows for it.
func (m *markdown) transactions(scenarios []result.ScenarioResult) {
	var groups, trends bool
	for _, s := range scenarios {
		groups = groups || len(s.Groups) > 0
		trends = trends || len(s.Trends) > 0
	}
	if groups {
		m.printf("## Transactions\n\n")
		m.printf("Each k6 `group()` of a scenario timed as a whole (k6's group_duration): every request in it and the script's own work between them, in milliseconds. ")
		m.printf("Count is exact; the average is exact; percentiles lie within the histogram's bucket bound of the true value; max is an upper bound.\n\n")
		for _, s := range scenarios {
			if len(s.Groups) == 0 {
				continue
			}
			m.printf("### Scenario %s\n\n", s.Name)
			m.printf("| Transaction | Count | Rate (/s) | Avg | p50 | p75 | p90 | p95 | Max |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
			for _, g := range s.Groups {
				m.printf("| %s | %s | %s | %s |\n", cell(g.Name), intOr(g.Count), num(g.Rate, 2), distributionCells(g.Latency))
			}
			m.printf("\n")
		}
	}
	if trends {
		m.printf("## Custom metrics\n\n")
		m.printf("The Trends the scripts define, every tag set of a scenario summed into one row. ")
		m.printf("A time Trend (`new Trend(name, true)`) is in milliseconds; any other is in the script's own unit.\n\n")
		m.printf("| Scenario | Trend | Unit | Count | Avg | p50 | p75 | p90 | p95 | Max |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range scenarios {
			for _, t := range s.Trends {
				m.printf("| %s | %s | %s | %s | %s |\n", cell(s.Name), cell(t.Name), orDash(t.Unit), intOr(t.Count), distributionCells(t.Latency))
			}
		}
		m.printf("\n")
	}
}

// distributionCells are the avg, p50, p75, p90, p95 and max cells of a table row.
func distributionCells(l result.Latency) string {
	return fmt.Sprintf("%s | %s | %s | %s | %s | %s", num(l.Avg, 3), num(l.P50, 3), num(l.P75, 3), num(l.P90, 3), num(l.P95, 3), num(l.Max, 3))
}
