package dashboards_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/dashboards"
)

var update = flag.Bool("update", false, "rewrite the shipped dashboard files")

func sampleExperiment() dashboards.ExperimentInput {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	return dashboards.ExperimentInput{Namespace: "shop", Name: "no-cpu-limits",
		Run:      dashboards.Run{TestID: "no-cpu-limits-4e5f6a7b", Start: start, MeasuredStart: start.Add(time.Minute), End: start.Add(11 * time.Minute)},
		Baseline: &dashboards.Run{TestID: "baseline-0a1b2c3d", Start: start.Add(-time.Hour), MeasuredStart: start.Add(-59 * time.Minute), End: start.Add(-49 * time.Minute)},
		Workloads: []dashboards.Workload{
			{Namespace: "shop", Name: "checkout", Kind: perfexpv1alpha1.WorkloadKindDeployment},
			{Namespace: "shop", Name: "db", Kind: perfexpv1alpha1.WorkloadKindStatefulSet},
		}}
}

// Every dashboard perfexp writes passes the structural checks, whatever its input.
func TestDashboardsAreValid(t *testing.T) {
	noBaseline := sampleExperiment()
	noBaseline.Baseline, noBaseline.Workloads = nil, nil
	noBaseline.Run.MeasuredStart = noBaseline.Run.Start
	long := sampleExperiment()
	long.Run.TestID = strings.Repeat("a-very-long-experiment-name", 2) + "-4e5f6a7b"
	tests := []struct {
		name string
		d    *dashboards.Dashboard
	}{
		{"experiment with baseline, warm-up and workloads", dashboards.Experiment(sampleExperiment())},
		{"experiment alone", dashboards.Experiment(noBaseline)},
		{"experiment with a long test id", dashboards.Experiment(long)},
		{"overview", dashboards.Overview()},
		{"sweep", dashboards.Sweep()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := dashboards.Validate(tt.d); err != nil {
				t.Error(err)
			}
			if len(tt.d.Panels) == 0 || len(tt.d.Annotations.List) == 0 {
				t.Errorf("%d panels, %d annotations", len(tt.d.Panels), len(tt.d.Annotations.List))
			}
		})
	}
}

// Validate finds each structural fault Grafana would trip over.
func TestValidateFindsFaults(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(d *dashboards.Dashboard)
		want  string
	}{
		{"duplicate panel id", func(d *dashboards.Dashboard) { d.Panels[1].ID = d.Panels[0].ID }, "id already used"},
		{"overlapping panels", func(d *dashboards.Dashboard) { d.Panels[1].GridPos = d.Panels[0].GridPos }, "overlap"},
		{"panel beyond the grid", func(d *dashboards.Dashboard) { d.Panels[0].GridPos.X = 20 }, "outside the 24-column grid"},
		{"panel without a query", func(d *dashboards.Dashboard) { d.Panels[2].Targets = nil }, "has no query"},
		{"empty expression", func(d *dashboards.Dashboard) { d.Panels[2].Targets[0].Expr = " " }, "has no expression"},
		{"undefined variable", func(d *dashboards.Dashboard) { d.Panels[3].Targets[0].Expr += ` + $nosuch` }, "$nosuch, which is not defined"},
		{"unresolved data source", func(d *dashboards.Dashboard) { d.Panels[4].Datasource.UID = "${ds}" }, "does not resolve"},
		{"data source variable missing", func(d *dashboards.Dashboard) { d.Templating.List = d.Templating.List[1:] }, "does not resolve"},
		{"annotation with an unknown variable", func(d *dashboards.Dashboard) { d.Annotations.List[0].Expr = `up{x="$x"}` }, "$x, which is not defined"},
		{"uid too long", func(d *dashboards.Dashboard) { d.UID = strings.Repeat("u", 41) }, "uid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := dashboards.Experiment(sampleExperiment())
			tt.spoil(d)
			err := dashboards.Validate(d)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestUID(t *testing.T) {
	tests := []struct{ testID, want string }{
		{"demo-no-cpu-limits-4e5f6a7b", "perfexp-demo-no-cpu-limits-4e5f6a7b"},
		{"a-very-long-experiment-name-that-goes-on-4e5f6a7b", "perfexp-a-very-long-experiment-4e5f6a7b"},
	}
	for _, tt := range tests {
		got := dashboards.UID(tt.testID)
		if got != tt.want || len(got) > dashboards.UIDMaxLength {
			t.Errorf("UID(%q) = %q (%d characters), want %q", tt.testID, got, len(got), tt.want)
		}
	}
}

// The baseline is shifted by the time between the measured starts, so both runs' curves start
// together; the run's window with margins is the time range.
func TestExperimentOverlayAndWindow(t *testing.T) {
	d := dashboards.Experiment(sampleExperiment())
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		if v.Current != nil {
			vars[v.Name] = v.Current.Value.(string)
		}
	}
	if vars["baseline_offset"] != "3600" || vars["baseline"] != "baseline-0a1b2c3d" || vars["testid"] != "no-cpu-limits-4e5f6a7b" {
		t.Errorf("variables %v", vars)
	}
	if d.Time.From != "2026-11-22T11:58:00Z" || d.Time.To != "2026-11-22T12:13:00Z" {
		t.Errorf("time range %+v", d.Time)
	}
	// With a warm-up the whole-run p95 starts at its end (Unix 1795348860 = 12:01, the range ends at 12:13).
	if e := d.Panels[0].Targets[0].Expr; !strings.Contains(e, "increase(") || !strings.Contains(e, "[720s] @ 1795349580") {
		t.Errorf("whole-run p95 with a warm-up: %s", e)
	}
	if e := d.Panels[1].Targets[0].Expr; !strings.Contains(e, "@ 1795348860") {
		t.Errorf("whole-run requests with a warm-up do not subtract the warm-up's end: %s", e)
	}
}

// The static dashboards are shipped as files: config/grafana/ and the chart's files/grafana/
// hold exactly what Overview and Sweep build (go test ./internal/dashboards -run Shipped -update
// rewrites them).
func TestShippedDashboardsAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	for name, d := range map[string]*dashboards.Dashboard{"overview.json": dashboards.Overview(), "sweep.json": dashboards.Sweep()} {
		want, err := d.JSON()
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(want) {
			t.Fatalf("%s is not JSON", name)
		}
		for _, dir := range []string{"config/grafana", "charts/perfexp/files/grafana"} {
			path := filepath.Join(root, dir, name)
			if *update {
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is not what dashboards builds: run go test ./internal/dashboards -run Shipped -update", path)
			}
		}
	}
}

// Without a baseline, CPU and memory show the run only: a baseline curve at offset 0 would be
// the run's own under another name.
func TestExperimentWithoutBaselineShowsTheRunOnly(t *testing.T) {
	for _, withBaseline := range []bool{true, false} {
		in := sampleExperiment()
		if !withBaseline {
			in.Baseline = nil
		}
		d := dashboards.Experiment(in)
		want := len(in.Workloads)
		if withBaseline {
			want *= 2
		}
		for _, p := range d.Panels {
			if strings.HasPrefix(p.Title, "CPU per service") || strings.HasPrefix(p.Title, "Memory working set") {
				if len(p.Targets) != want {
					t.Errorf("baseline %v: %q has %d queries, want %d", withBaseline, p.Title, len(p.Targets), want)
				}
			}
		}
	}
}
