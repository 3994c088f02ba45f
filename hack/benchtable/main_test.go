package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadResultsKeepsEveryMetricInItsOwnUnit(t *testing.T) {
	f, err := os.Open("testdata/bench.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	rows, err := readResults(f, "bench.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []row{
		{Pkg: "github.com/perfexp/perfexp/controllers", Name: "QueueBurst-2", Iters: 1, Metrics: []metric{
			{66148967959, "ns/op"}, {4.69, "burst-requests/exp"}, {2006, "burst-status-writes"}, {385.6, "p99-reconcile-ms"}}},
		{Pkg: "github.com/perfexp/perfexp/internal/analysis", Name: "Analyze/workloads=50-2", Iters: 3, Metrics: []metric{
			{412345678, "ns/op"}, {123456, "B/op"}, {2345, "allocs/op"}}},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(rows), len(want), rows)
	}
	for i := range want {
		got := rows[i]
		if got.Pkg != want[i].Pkg || got.Name != want[i].Name || got.Iters != want[i].Iters {
			t.Errorf("result %d: %s %s x%d, want %s %s x%d", i, got.Pkg, got.Name, got.Iters, want[i].Pkg, want[i].Name, want[i].Iters)
		}
		if len(got.Metrics) != len(want[i].Metrics) {
			t.Errorf("result %d: metrics %v, want %v", i, got.Metrics, want[i].Metrics)
			continue
		}
		for j, m := range want[i].Metrics {
			if g := got.Metrics[j]; g.Unit != m.Unit || g.Value != m.Value {
				t.Errorf("result %d metric %d: %v %s, want %v %s", i, j, g.Value, g.Unit, m.Value, m.Unit)
			}
		}
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		in   metric
		want string
	}{
		{metric{66148967959, "ns/op"}, "1m6.1s/op"},
		{metric{412345678, "ns/op"}, "412ms/op"},
		{metric{4.69, "burst-requests/exp"}, "4.69"},
		{metric{385.64, "p99-reconcile-ms"}, "385.6"},
		{metric{2006, "burst-status-writes"}, "2006"},
		{metric{123456.7, "B/op"}, "123457"},
		{metric{0.0123456, "x"}, "0.01235"},
	}
	for _, tt := range tests {
		t.Run(tt.in.Unit, func(t *testing.T) {
			if got := formatValue(tt.in); got != tt.want {
				t.Errorf("formatValue(%v %s) = %q, want %q", tt.in.Value, tt.in.Unit, got, tt.want)
			}
		})
	}
}

func TestReplaceSection(t *testing.T) {
	section := beginMarker + "\nnew\n" + endMarker
	tests := []struct {
		name, page, want, err string
	}{
		{name: "replaces only between the markers", page: "a\n" + beginMarker + "\nold\n" + endMarker + "\nb\n", want: "a\n" + section + "\nb\n"},
		{name: "no markers", page: "a\n", err: "want the markers"},
		{name: "end before begin", page: endMarker + beginMarker, err: "comes before"},
		{name: "markers twice", page: beginMarker + endMarker + beginMarker + endMarker, err: "more than once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := replaceSection([]byte(tt.page), section)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// The whole run: the page keeps its prose, the section names the machine, lists every result
// and names the file that was not there.
func TestRunRewritesThePage(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "benchmarks.md")
	if err := os.WriteFile(doc, []byte("# Benchmarks\n\nprose\n\n"+beginMarker+"\nstale table\n"+endMarker+"\n\nmore prose\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "e2e.txt")
	if err := run(doc, "0.42 0.5 0.6 1/100 7", []string{"testdata/bench.txt", missing}); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := string(page)
	for _, want := range []string{
		"# Benchmarks\n\nprose\n\n" + beginMarker,
		endMarker + "\n\nmore prose\n",
		"Written " + time.Now().UTC().Format("2006-01-02"),
		"load average (1 min) 0.42 when the benchmarks started",
		"| controllers | QueueBurst-2 | 1 | ns/op | 1m6.1s/op |",
		"|  |  |  | burst-status-writes | 2006 |",
		"| internal/analysis | Analyze/workloads=50-2 | 3 | ns/op | 412ms/op |",
		"No `e2e.txt`: not run.",
		"Read from `bench.txt` (written ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the page lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "stale table") {
		t.Errorf("the old section was kept:\n%s", got)
	}
}
