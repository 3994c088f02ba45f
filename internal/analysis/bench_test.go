package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

// benchData writes length of a run with the given number of request names (two k6 runners,
// a flush every `every`, an iterations counter per runner as k6 writes it) and workloads (two
// pods each, scraped every `every`, with cAdvisor's limit series) into a real Prometheus, and
// returns the input that analyses it.
func benchData(b *testing.B, prom *promtest.Server, testID string, names, workloads int, start time.Time, length, every time.Duration, routes bool) Input {
	b.Helper()
	end := start.Add(length)
	var series []promtest.Series
	for _, inst := range []string{"0", "1"} {
		var iters []promtest.Float
		for n := range names {
			s := promtest.NewK6Series(promtest.K6Labels(testID, "main", fmt.Sprintf("request-%03d", n), inst, true))
			for at := start.Add(every); !at.After(end); at = at.Add(every) {
				s.Flush(at, latencies(3, 0.001, 0.2, n+int(at.Unix()))...)
				if n == 0 {
					iters = append(iters, promtest.Float{T: at, V: float64(len(iters)+1) * 3})
				}
			}
			series = append(series, s.Series()...)
		}
		series = append(series, promtest.Series{Labels: map[string]string{"__name__": "k6_iterations_total", "testid": testID, "scenario": "main", "instance_id": inst}, Floats: iters})
	}
	in := Input{Experiment: testID, TestID: testID, Start: start, End: end, Scenarios: []string{"main"}}
	for w := range workloads {
		name := fmt.Sprintf("svc-%02d", w)
		for p := range 2 {
			c := cadvisor{ns: testID, pod: fmt.Sprintf("%s-7d9f8c6b5-pod%02d", name, p), container: "app", id: fmt.Sprintf("%s-%d", name, p),
				from: start, to: end, cpuCores: 0.1 * float64(p+1), mem: constant(float64(100+w) * mib), periodsPerSec: 10, throttledPerSec: 1,
				limits: true, cpuLimit: 1, memLimit: 512 * mib, every: every}
			series = append(series, c.series()...)
			// The service's own request histogram, four routes, read by analysis.observe's routes.
			for route := range 4 * boolInt(routes) {
				h := newRouteHist(true, map[string]string{"namespace": testID, "pod": c.pod, "route": fmt.Sprintf("route-%d", route), "code": "200"})
				for at := start; !at.After(end); at = at.Add(every) {
					h.scrape(at, "bench_http_request_duration_seconds", latencies(5, 0.002, 0.05, route+int(at.Unix()))...)
				}
				series = append(series, h.out...)
			}
		}
		if routes {
			in.Routes = append(in.Routes, RouteSource{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: testID, Name: name,
				Spec: perfexpv1alpha1.RouteHistogram{Metric: "bench_http_request_duration_seconds"}})
		}
		in.Workloads = append(in.Workloads, Workload{Kind: perfexpv1alpha1.WorkloadKindDeployment, Namespace: testID, Name: name,
			Containers: []Container{{Name: "app", CPULimit: ptr(1), MemoryLimit: ptr(512 * mib)}}})
	}
	prom.Write(b, series)
	return in
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// BenchmarkAnalyze analyses one hour of 200 request names and 50 workloads (each with four
// routes of its own request histogram), and a run of 20 names and 5 workloads, and reports the number of Prometheus queries each needs: the same.
func BenchmarkAnalyze(b *testing.B) {
	prom := promtest.Start(b)
	api := prom.API(b)
	start := time.Now().Add(-62 * time.Minute).Truncate(time.Minute)
	big := benchData(b, prom, "bench-big", 200, 50, start, time.Hour, 15*time.Second, true)
	small := benchData(b, prom, "bench-small", 20, 5, start, time.Hour, 15*time.Second, true)
	for _, tc := range []struct {
		name string
		in   Input
	}{{"50workloads-200names-1h", big}, {"5workloads-20names-1h", small}} {
		b.Run(tc.name, func(b *testing.B) {
			var r *result.Result
			tq := &timingQuerier{Querier: api}
			promCPU, ownCPU := cpuSeconds(b, prom.Pid), cpuSeconds(b, os.Getpid())
			for b.Loop() {
				var err error
				if r, err = Analyze(context.Background(), tq, tc.in); err != nil {
					b.Fatal(err)
				}
			}
			tq.log(b, 12)
			// CPU per analysis says more than wall time on a shared machine.
			b.ReportMetric((cpuSeconds(b, prom.Pid)-promCPU)/float64(b.N), "prom-cpu-s/op")
			b.ReportMetric((cpuSeconds(b, os.Getpid())-ownCPU)/float64(b.N), "client-cpu-s/op")
			if got := len(r.Scenarios[0].Requests); got != len(tc.in.Workloads)*4 {
				b.Fatalf("%d request names, want %d", got, len(tc.in.Workloads)*4)
			}
			if len(r.Workloads) != len(tc.in.Workloads) || r.Workloads[0].CPUAvg == nil {
				b.Fatalf("workloads %+v", r.Workloads)
			}
			if len(r.Routes) != 4*len(tc.in.Routes) || r.Routes[0].P95 == nil {
				b.Fatalf("%d routes, want %d", len(r.Routes), 4*len(tc.in.Routes))
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

// BenchmarkAnalyzeSoak analyses a 24-hour soak of 20 request names and 50 workloads (k6
// flushing and cAdvisor scraped every 30 s) with time slices, against a Prometheus with its
// default --query.max-samples (50M): no query may hit it, and the analysis must make as many
// queries as the first 10 hours of the same run (the same slices, so as many distinct edges).
func BenchmarkAnalyzeSoak(b *testing.B) {
	prom := promtest.Start(b)
	api := prom.API(b)
	start := time.Now().Add(-24*time.Hour - 10*time.Minute).Truncate(time.Minute)
	soak := benchData(b, prom, "soak", 20, 50, start, 24*time.Hour, 30*time.Second, false)
	h := func(n int) *metav1.Duration { return &metav1.Duration{Duration: time.Duration(n) * time.Hour} }
	soak.Analysis.Slices = []perfexpv1alpha1.TimeSlice{{Name: "first-2h", From: h(0), To: h(2)}, {Name: "last-6h", Last: h(6)}}
	shorter := soak
	shorter.End = start.Add(10 * time.Hour)
	short, err := Analyze(context.Background(), api, shorter)
	if err != nil {
		b.Fatal(err)
	}
	var r *result.Result
	tq := &timingQuerier{Querier: api}
	promCPU, ownCPU := cpuSeconds(b, prom.Pid), cpuSeconds(b, os.Getpid())
	for b.Loop() {
		if r, err = Analyze(context.Background(), tq, soak); err != nil {
			b.Fatal(err)
		}
	}
	tq.log(b, 12)
	if r.PrometheusQueries != short.PrometheusQueries {
		b.Errorf("%d queries for 24 h, %d for the first 10 h", r.PrometheusQueries, short.PrometheusQueries)
	}
	if len(r.Slices) != 2 || r.Slices[1].Total.Requests == nil || *r.Slices[1].Total.Requests == 0 {
		b.Fatalf("slices %+v", r.Slices)
	}
	// 20 names x 2 runners x 3 requests per 30 s flush.
	if want := int64(20 * 2 * 3 * 2880); *r.Total.Requests != want {
		b.Errorf("%d requests, want %d", *r.Total.Requests, want)
	}
	b.ReportMetric(float64(r.PrometheusQueries), "queries/op")
	b.ReportMetric(float64(*r.Total.Requests), "requests")
	b.ReportMetric((cpuSeconds(b, prom.Pid)-promCPU)/float64(b.N), "prom-cpu-s/op")
	b.ReportMetric((cpuSeconds(b, os.Getpid())-ownCPU)/float64(b.N), "client-cpu-s/op")
}
