package analyzer_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analyzer"
)

// An experiment stored before the CRD's rule on queries (or sent past it) still carries a
// template program: the operator's own check refuses it before the run, naming it, and never
// sends it to Prometheus.
func TestCheckQueriesRefusesATemplateProgram(t *testing.T) {
	var asked []string
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		asked = append(asked, r.Form.Get("query"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"scalar","result":[1700000000,"1"]}}`)
	}))
	defer prom.Close()
	a := &analyzer.PrometheusAnalyzer{PrometheusURL: prom.URL}
	exp := &perfexpv1alpha1.PerfExperiment{}
	exp.Namespace, exp.Status.TestID = "shop", "soak-1a2b3c4d"
	exp.Spec.Analysis = &perfexpv1alpha1.Analysis{Queries: []perfexpv1alpha1.CustomQuery{
		{Name: "db-cpu", Query: `sum(rate(x{namespace="{{ .Namespace }}"}[{{.Window}}]))`},
		{Name: "loop", Query: `{{range 100000}}{{range 100000}}x{{end}}{{end}}`},
	}}
	res, err := a.CheckQueries(t.Context(), exp)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonQueryInvalid ||
		!strings.Contains(res.Failure.Message, "query loop: bad template: {{range 100000}} is not a placeholder; a query may use only {{.Namespace}}") {
		t.Fatalf("CheckQueries: %+v", res.Failure)
	}
	if len(asked) != 1 || asked[0] != `sum(rate(x{namespace="shop"}[1m]))` {
		t.Fatalf("Prometheus was asked %q; want only the valid query, rendered", asked)
	}
}

// Story: a tenant's experiment asks for kube-system's containers and every test id. The check
// before the run fails the experiment, naming the selector and the rule, and sends neither
// query; in a namespace the admin lets read everything, the same queries pass.
func TestCheckQueriesRefusesQueriesOutsideTheExperiment(t *testing.T) {
	var asked []string
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		asked = append(asked, r.Form.Get("query"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"scalar","result":[1700000000,"1"]}}`)
	}))
	defer prom.Close()
	exp := &perfexpv1alpha1.PerfExperiment{}
	exp.Namespace, exp.Status.TestID = "team-a", "probe-1a2b3c4d"
	exp.Spec.Analysis = &perfexpv1alpha1.Analysis{Queries: []perfexpv1alpha1.CustomQuery{
		{Name: "etcd", Query: `sum(rate(container_cpu_usage_seconds_total{namespace="kube-system"}[{{.Window}}]))`},
		{Name: "test-ids", Query: `count by (testid) (k6_http_reqs_total{testid=~".+"})`},
	}}
	a := &analyzer.PrometheusAnalyzer{PrometheusURL: prom.URL}
	res, err := a.CheckQueries(t.Context(), exp)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonQueryInvalid ||
		!strings.Contains(res.Failure.Message, `query etcd: the query reads outside the experiment: selector container_cpu_usage_seconds_total{namespace="kube-system"}: it matches namespace="kube-system"`) ||
		!strings.Contains(res.Failure.Message, `query test-ids: the query reads outside the experiment`) {
		t.Fatalf("CheckQueries: %+v", res.Failure)
	}
	if len(asked) != 0 {
		t.Fatalf("Prometheus was asked %q; a query outside the experiment must not be sent", asked)
	}

	a.UnboundQueryNamespaces = []string{"team-a"}
	if res, err := a.CheckQueries(t.Context(), exp); err != nil || res.Failure != nil {
		t.Fatalf("in an unbound namespace: %+v, %v", res.Failure, err)
	}
}
