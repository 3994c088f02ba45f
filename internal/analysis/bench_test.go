package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
)

// benchData writes one hour of a run with the given number of request names (two k6 runners,
// a flush every 15 s) and workloads (two pods each, scraped every 15 s) into a real
// Prometheus, and returns the input that analyses it.
func benchData(b *testing.B, prom *promtest.Server, testID string, names, workloads int, start time.Time) Input {
	b.Helper()
	end := start.Add(time.Hour)
	var series []promtest.Series
	for n := range names {
		for _, inst := range []string{"0", "1"} {
			s := promtest.NewK6Series(promtest.K6Labels(testID, "main", fmt.Sprintf("request-%03d", n), inst, true))
			for at := start.Add(15 * time.Second); !at.After(end); at = at.Add(15 * time.Second) {
				s.Flush(at, latencies(3, 0.001, 0.2, n+int(at.Unix()))...)
			}
			series = append(series, s.Series()...)
		}
	}
	in := Input{Experiment: testID, TestID: testID, Start: start, End: end, Scenarios: []string{"main"}}
	for w := range workloads {
		name := fmt.Sprintf("svc-%02d", w)
		for p := range 2 {
			c := cadvisor{ns: testID, pod: fmt.Sprintf("%s-7d9f8c6b5-pod%02d", name, p), container: "app", id: fmt.Sprintf("%s-%d", name, p),
				from: start, to: end, cpuCores: 0.1 * float64(p+1), mem: constant(float64(100+w) * mib), periodsPerSec: 10, throttledPerSec: 1}
			series = append(series, c.series()...)
		}
		in.Workloads = append(in.Workloads, Workload{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: testID, Name: name,
			Containers: []Container{{Name: "app", CPULimit: ptr(1), MemoryLimit: ptr(512 * mib)}}})
	}
	prom.Write(b, series)
	return in
}

// BenchmarkAnalyze analyses one hour of 200 request names and 50 workloads, and a run of 20
// names and 5 workloads, and reports the number of Prometheus queries each needs: the same.
func BenchmarkAnalyze(b *testing.B) {
	prom := promtest.Start(b)
	api := prom.API(b)
	start := time.Now().Add(-62 * time.Minute).Truncate(time.Minute)
	big := benchData(b, prom, "bench-big", 200, 50, start)
	small := benchData(b, prom, "bench-small", 20, 5, start)
	for _, tc := range []struct {
		name string
		in   Input
	}{{"50workloads-200names-1h", big}, {"5workloads-20names-1h", small}} {
		b.Run(tc.name, func(b *testing.B) {
			var r *Result
			for b.Loop() {
				var err error
				if r, err = Analyze(context.Background(), api, tc.in); err != nil {
					b.Fatal(err)
				}
			}
			if got := len(r.Scenarios[0].Requests); got != len(tc.in.Workloads)*4 {
				b.Fatalf("%d request names, want %d", got, len(tc.in.Workloads)*4)
			}
			if len(r.Workloads) != len(tc.in.Workloads) || r.Workloads[0].CPUAvg == nil {
				b.Fatalf("workloads %+v", r.Workloads)
			}
			status, _ := r.Status()
			js, err := json.Marshal(status)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(r.PrometheusQueries), "queries/op")
			b.ReportMetric(float64(len(js)), "status-bytes")
			b.ReportMetric(float64(*r.Total.Requests), "requests")
		})
	}
}
