package report

import (
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/dashboards"
	"github.com/perfexp/perfexp/internal/result"
)

// DashboardOptions are what a run's dashboard needs beyond its results.
type DashboardOptions struct {
	// Baseline is the run overlaid by default; nil leaves the baseline variable empty.
	Baseline *dashboards.Run
	// CAdvisorMatchers and CAdvisorMaxAge are the analysis's (empty and zero: its defaults),
	// so the dashboard's CPU and memory count the same containers as the report.
	CAdvisorMatchers string
	CAdvisorMaxAge   time.Duration
}

// Dashboard renders the Grafana dashboard of the run without a baseline.
func Dashboard(r *result.Result) ([]byte, error) {
	return DashboardWith(r, DashboardOptions{})
}

// DashboardWith renders the Grafana dashboard of the run (internal/dashboards.Experiment): its
// window, the baseline overlaid, phase annotations, the whole-run p95 read from the report's
// histogram, error rate, throughput, and the CPU and memory of every reported workload.
func DashboardWith(r *result.Result, opts DashboardOptions) ([]byte, error) {
	return dashboards.Experiment(DashboardInput(r, opts)).JSON()
}

// DashboardInput is the dashboard input of a run's results.
func DashboardInput(r *result.Result, opts DashboardOptions) dashboards.ExperimentInput {
	in := dashboards.ExperimentInput{
		Namespace: r.Namespace, Name: r.Experiment,
		Run:      dashboards.Run{TestID: r.TestID, Start: r.Window.Start, MeasuredStart: r.Window.MeasuredStart, End: r.Window.End},
		Baseline: opts.Baseline, CAdvisorMatchers: opts.CAdvisorMatchers, CAdvisorMaxAge: opts.CAdvisorMaxAge,
	}
	if in.Run.MeasuredStart.IsZero() {
		in.Run.MeasuredStart = in.Run.Start
	}
	for _, w := range r.Workloads {
		in.Workloads = append(in.Workloads, dashboards.Workload{Namespace: w.Namespace, Name: w.Name, Kind: perfexpv1alpha1.WorkloadKind(w.Kind)})
	}
	return in
}
