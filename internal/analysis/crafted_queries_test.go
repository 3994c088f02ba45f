package analysis

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

// Story: a soak test's report with the database's CPU as a custom query and results for the
// first and the last ten minutes, every number read at the edges of its own slice.
func TestCraftedQueriesAndSlices(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-45 * time.Minute).Truncate(time.Minute)
	start, end := base.Add(time.Minute), base.Add(41*time.Minute)
	const id = "soak-1"

	s := promtest.NewK6Series(promtest.K6Labels(id, "soak", "get", "0", true))
	for i := 1; i <= 240; i++ { // one flush every 10 s for 40 minutes, slower in the last 10
		lat := 0.01
		if i > 180 {
			lat = 0.05
		}
		s.Flush(start.Add(time.Duration(i)*10*time.Second-500*time.Millisecond), lat, lat)
	}
	series := s.Series()
	series = append(series, cadvisor{ns: "shop", pod: "db-0", container: "postgres", id: "d", from: base, to: base.Add(44 * time.Minute), cpuCores: 0.25, mem: constant(mib)}.series()...)
	prom.Write(t, series)

	dur := func(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }
	in := Input{
		Experiment: "soak", TestID: id, TargetNamespace: "shop", Start: start, End: end, Scenarios: []string{"soak"},
		Workloads: []Workload{{Kind: perfexpv1alpha1.WorkloadKindStatefulSet, Namespace: "shop", Name: "db", Containers: []Container{{Name: "postgres"}}}},
		Analysis: perfexpv1alpha1.Analysis{
			Queries: []perfexpv1alpha1.CustomQuery{
				{Name: "db-cpu", Unit: "cores", Query: `sum(rate(container_cpu_usage_seconds_total{namespace="{{.Namespace}}",pod="db-0"}[{{.Window}}]))`},
				{Name: "cpu-by-pod", Unit: "cores", Query: `sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="{{.Namespace}}"}[{{.Window}}]))`},
				{Name: "nan", Query: `0/0`},
				{Name: "bad-promql", Query: `sum(`},
				{Name: "bad-template", Query: `up{x="{{.Nope}}"}`},
				{Name: "range", Query: `up[5m]`},
			},
			Slices: []perfexpv1alpha1.TimeSlice{
				{Name: "first-10m", To: dur(10 * time.Minute)},
				{Name: "last-10m", Last: dur(10 * time.Minute)},
			},
		},
	}
	r, err := Analyze(context.Background(), prom.API(t), in)
	if err != nil {
		t.Fatal(err)
	}
	q := map[string]result.QueryResult{}
	for _, x := range r.Queries {
		q[x.Name] = x
	}
	tests := []struct {
		name string
		ok   bool
		got  any
	}{
		{"the template is filled in (as Prometheus' parser prints it)", q["db-cpu"].Query == `sum(rate(container_cpu_usage_seconds_total{namespace="shop",pod="db-0"}[40m]))`, q["db-cpu"].Query},
		{"a one-series query has a value", q["db-cpu"].Value != nil && within(*q["db-cpu"].Value, 0.25, 1e-6), deref(q["db-cpu"].Value)},
		{"a labelled query keeps its series", len(q["cpu-by-pod"].Series) == 1 && q["cpu-by-pod"].Series[0].Labels["pod"] == "db-0", q["cpu-by-pod"].Series},
		{"NaN is absent, not a number", q["nan"].Value == nil && q["nan"].Error == "", deref(q["nan"].Value)},
		{"bad PromQL is reported, not retried", q["bad-promql"].Error != "", q["bad-promql"].Error},
		{"a bad template is reported", q["bad-template"].Error != "", q["bad-template"].Error},
		{"a range vector is explained", q["range"].Error != "", q["range"].Error},
		{"the whole window: 480 requests", *r.Scenarios[0].RequestStats.Requests == 480, *r.Scenarios[0].RequestStats.Requests},
		{"first 10 minutes: 120 requests", *r.Slices[0].Scenarios[0].RequestStats.Requests == 120, *r.Slices[0].Scenarios[0].RequestStats.Requests},
		{"last 10 minutes: 120 requests", *r.Slices[1].Scenarios[0].RequestStats.Requests == 120, *r.Slices[1].Scenarios[0].RequestStats.Requests},
		{"first 10 minutes: p95 10 ms", within(*r.Slices[0].Scenarios[0].P95, 10, schema3Bound), *r.Slices[0].Scenarios[0].P95},
		{"last 10 minutes: p95 50 ms", within(*r.Slices[1].Scenarios[0].P95, 50, schema3Bound), *r.Slices[1].Scenarios[0].P95},
		{"slices have their own rate", within(*r.Slices[1].Scenarios[0].Rate, 0.2, 1e-9), *r.Slices[1].Scenarios[0].Rate},
		{"slices have workload use", len(r.Slices[1].Workloads) == 1 && within(*r.Slices[1].Workloads[0].CPUAvg, 0.25, 1e-6), r.Slices[1].Workloads},
		{"slices evaluate custom queries over themselves", r.Slices[1].Queries[0].Query == `sum(rate(container_cpu_usage_seconds_total{namespace="shop",pod="db-0"}[10m]))`, r.Slices[1].Queries[0].Query},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok {
				t.Errorf("got %v", tc.got)
			}
		})
	}
}
