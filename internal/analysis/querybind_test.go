package analysis

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

func TestBindQuery(t *testing.T) {
	scope := QueryScope{Namespace: "shop", TestID: "soak-1a2b3c4d", MaxReach: 35 * time.Minute}
	tests := []struct {
		name, query string
		want        string // the bound query; empty when refused
		wantErr     string
	}{
		{name: "a selector without namespace gets the target's", query: `sum by (namespace) (kube_pod_info)`,
			want: `sum by (namespace) (kube_pod_info{namespace="shop"})`},
		{name: "every selector is bound", query: `rate(a[5m]) / on(pod) group_left b`,
			want: `rate(a{namespace="shop"}[5m]) / on (pod) group_left () b{namespace="shop"}`},
		{name: "the target namespace stays", query: `up{namespace="shop",job="x"}`, want: `up{job="x",namespace="shop"}`},
		{name: "the run's k6 series", query: `sum(k6_http_reqs_total{testid="soak-1a2b3c4d"})`, want: `sum(k6_http_reqs_total{testid="soak-1a2b3c4d"})`},
		{name: "a name-only selector", query: `{__name__=~"kube_secret.*"}`, want: `{__name__=~"kube_secret.*",namespace="shop"}`},
		{name: "a subquery inside its reach", query: `max_over_time(rate(a[1m])[30m:1m])`, want: `max_over_time(rate(a{namespace="shop"}[1m])[30m:1m])`},
		{name: "another namespace", query: `up{namespace="kube-system"}`, wantErr: `it matches namespace="kube-system"`},
		{name: "namespaces by regular expression", query: `up{namespace=~"shop|kube-system"}`, wantErr: `it matches namespace=~"shop|kube-system"`},
		{name: "every namespace but one", query: `up{namespace!="shop"}`, wantErr: `it matches namespace!="shop"`},
		{name: "the namespace twice", query: `up{namespace="shop",namespace=~".+"}`, wantErr: `it matches namespace=~".+"`},
		{name: "another experiment's k6 series", query: `k6_http_reqs_total{testid="other-00000000"}`, wantErr: `it matches testid="other-00000000"`},
		{name: "every test id", query: `count by (testid) (k6_http_reqs_total{testid=~".+"})`, wantErr: `it matches testid=~".+"`},
		{name: "a range past the window", query: `rate(a[30d])`, wantErr: "more than the run's window plus 5m"},
		{name: "an offset past the window", query: `a offset 7d`, wantErr: "more than the run's window plus 5m"},
		{name: "a subquery past the window", query: `max_over_time(a[30d:1h])`, wantErr: "more than the run's window plus 5m"},
		{name: "a pinned time", query: `a @ 1600000000`, wantErr: "is pinned with @ to a time"},
		{name: "unparsable", query: `sum(`, wantErr: "the query does not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BindQuery(tt.query, scope)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("BindQuery(%s) = %q, %v; want an error containing %q", tt.query, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("BindQuery(%s) = %q, %v; want %q", tt.query, got, err, tt.want)
			}
		})
	}
	t.Run("an unbound namespace reads everything within the reach", func(t *testing.T) {
		s := scope
		s.Unbound = true
		if got, err := BindQuery(`up{namespace="kube-system"}`, s); err != nil || got != `up{namespace="kube-system"}` {
			t.Fatalf("got %q, %v", got, err)
		}
		if _, err := BindQuery(`rate(up[30d])`, s); err == nil {
			t.Fatal("an unbound query must still be held to the run's window")
		}
	})
}

// Story: a tenant's custom queries ask for every namespace's containers and another
// experiment's k6 series; the report holds only the tenant's own namespace and run.
func TestCraftedQueriesReadOnlyTheExperiment(t *testing.T) {
	prom := promtest.Start(t)
	base := time.Now().Add(-20 * time.Minute).Truncate(time.Minute)
	start, end := base.Add(time.Minute), base.Add(11*time.Minute)
	const id, otherID = "own-1", "victim-2"
	var series = cadvisor{ns: "shop", pod: "db-0", container: "postgres", id: "d", from: base, to: base.Add(15 * time.Minute), cpuCores: 0.25, mem: constant(mib)}.series()
	series = append(series, cadvisor{ns: "kube-system", pod: "etcd-0", container: "etcd", id: "e", from: base, to: base.Add(15 * time.Minute), cpuCores: 1, mem: constant(mib)}.series()...)
	for _, tid := range []string{id, otherID} {
		s := promtest.NewK6Series(promtest.K6Labels(tid, "get", "get", "0", true))
		for i := 1; i <= 60; i++ {
			s.Flush(start.Add(time.Duration(i)*10*time.Second-500*time.Millisecond), 0.01, 0.01)
		}
		series = append(series, s.Series()...)
	}
	prom.Write(t, series)

	in := Input{
		Experiment: "own", TestID: id, TargetNamespace: "shop", Start: start, End: end, Scenarios: []string{"get"},
		Analysis: perfexpv1alpha1.Analysis{Queries: []perfexpv1alpha1.CustomQuery{
			{Name: "cpu-by-namespace", Query: `sum by (namespace) (rate(container_cpu_usage_seconds_total[{{.Window}}]))`},
			{Name: "kube-system", Query: `sum(rate(container_cpu_usage_seconds_total{namespace="kube-system"}[{{.Window}}]))`},
			{Name: "test-ids", Query: `count by (testid) (k6_http_reqs_total)`},
			{Name: "victim", Query: `sum(k6_http_reqs_total{testid="` + otherID + `"})`},
			{Name: "own", Query: `sum(k6_http_reqs_total{testid="{{.TestID}}"})`},
		}},
	}
	r, err := Analyze(context.Background(), prom.API(t), in)
	if err != nil {
		t.Fatal(err)
	}
	q := map[string]result.QueryResult{}
	for _, x := range r.Queries {
		q[x.Name] = x
	}
	if s := q["cpu-by-namespace"].Series; len(s) > 1 || (len(s) == 1 && s[0].Labels["namespace"] != "shop") {
		t.Errorf("cpu-by-namespace read %v; want the target namespace's series only", s)
	}
	if v := q["cpu-by-namespace"].Value; v == nil || !within(*v, 0.25, 1e-6) {
		t.Errorf("cpu-by-namespace = %v (%s), want the target's 0.25 cores", deref(v), q["cpu-by-namespace"].Error)
	}
	for _, name := range []string{"kube-system", "victim"} {
		if qr := q[name]; !strings.Contains(qr.Error, "the query reads outside the experiment") || qr.Value != nil || len(qr.Series) > 0 {
			t.Errorf("%s: value %v, series %v, error %q; want it refused", name, deref(qr.Value), qr.Series, qr.Error)
		}
	}
	if s := q["test-ids"].Series; len(s) > 0 {
		t.Errorf("test-ids listed %v; k6 series carry no namespace, so a query bound to one lists none", s)
	}
	if v := q["own"].Value; v == nil || *v == 0 {
		t.Errorf("own = %v (%s), want the run's request count", deref(v), q["own"].Error)
	}
}

// A custom query Prometheus gives up on (errorType timeout) is reported on its own row; the
// analysis goes on instead of retrying it as an unavailable Prometheus until its timeout.
func TestCustomQueryTimeoutIsReportedOnItsRow(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.Form.Get("query"), "slow") {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}`)
			return
		}
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"scalar","result":[1700000000,"1"]}}`)
	}))
	defer srv.Close()
	specs := []perfexpv1alpha1.CustomQuery{{Name: "slow", Query: `sum(slow_series)`}, {Name: "fast", Query: `vector(1)`}}
	got, err := runQueries(t.Context(), cappedAPI(t, srv.URL, 0), specs, testData(), QueryScope{Namespace: "shop"}, time.Now())
	if err != nil {
		t.Fatalf("runQueries: %v; one slow query must not make the analysis wait for Prometheus", err)
	}
	if !strings.Contains(got[0].Error, "the query timed out") || got[0].Value != nil {
		t.Errorf("slow: %+v, want its row to say it timed out", got[0])
	}
	if got[1].Error != "" || got[1].Value == nil {
		t.Errorf("fast: %+v, want its value", got[1])
	}
}
