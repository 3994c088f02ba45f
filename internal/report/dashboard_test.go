package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/dashboards"
)

// The report's dashboard.json is the run's delivered dashboard: its time range is the window
// with the margins for the phases around it, its testid the run's, the baseline overlaid when
// one is given, and every reported workload has a CPU and a memory curve.
func TestDashboardGolden(t *testing.T) {
	r := sample()
	base := &dashboards.Run{TestID: "baseline-9f8e7d6c", Start: r.Window.Start.Add(-2 * time.Hour), End: r.Window.End.Add(-2 * time.Hour)}
	base.MeasuredStart = base.Start.Add(r.Window.MeasuredStart.Sub(r.Window.Start))
	b, err := DashboardWith(r, DashboardOptions{Baseline: base})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "dashboard.json.golden", b)
	var d dashboards.Dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if err := dashboards.Validate(&d); err != nil {
		t.Error(err)
	}
	if d.Time.From != "2026-03-01T09:58:00Z" || d.Time.To != "2026-03-01T10:13:00Z" {
		t.Errorf("time range %+v is not the window with 2-minute margins", d.Time)
	}
	vars := map[string]any{}
	for _, v := range d.Templating.List {
		if v.Current != nil {
			vars[v.Name] = v.Current.Value
		}
	}
	if vars["testid"] != "no-cpu-limits-1a2b3c4d" || vars["baseline"] != "baseline-9f8e7d6c" || vars["baseline_offset"] != "7200" {
		t.Errorf("variables %v", vars)
	}
	workloads := 0
	for _, p := range d.Panels {
		if strings.HasPrefix(p.Title, "CPU per service") {
			workloads = len(p.Targets) / 2 // run and baseline
		}
	}
	if workloads != len(r.Workloads) || workloads == 0 {
		t.Errorf("%d workloads in the CPU panel, the report has %d", workloads, len(r.Workloads))
	}
}
