package analysis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
)

// A real Prometheus judges the PromQL, so the test does not guess what it refuses.
func TestCheckQueries(t *testing.T) {
	prom := promtest.Start(t)
	now := time.Now()
	data := PrecheckData("shop", "soak-1a2b3c4d", now)
	queries := []perfexpv1alpha1.CustomQuery{
		{Name: "db-cpu", Query: `sum(rate(container_cpu_usage_seconds_total{namespace="{{.Namespace}}",pod="db-0"}[{{.Window}}]))`},
		{Name: "by-testid", Query: `sum by (name) (k6_http_reqs_total{testid="{{.TestID}}"})`},
		{Name: "no-data-yet", Query: `0/0`},
		{Name: "typo", Query: `sum(rate(container_cpu_usage_seconds_total{namespace="{{.Namespace}}"}[{{.Window}}])`},
		{Name: "bad-template", Query: `up{x="{{.Nope}}"}`},
		{Name: "unknown-function", Query: `avg_over_tim(up[{{.Window}}])`},
		{Name: "range", Query: `up[5m]`},
		{Name: "vector-by-vector-many-to-many", Query: `up + on() group_left up`},
	}
	problems, err := CheckQueries(t.Context(), prom.API(t), queries, data, PrecheckScope("shop", "soak-1a2b3c4d", false), now)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range problems {
		got[p.Name] = p.Message
		t.Log(p)
	}
	want := map[string]string{
		"typo":             "the query does not parse: 1:67: parse error: unclosed left parenthesis",
		"bad-template":     "bad template",
		"unknown-function": `unknown function with name "avg_over_tim"`,
		"range":            "range vector",
	}
	for name, msg := range want {
		if !strings.Contains(got[name], msg) {
			t.Errorf("query %s: problem %q, want one containing %q", name, got[name], msg)
		}
	}
	for name, msg := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("query %s reported as %q; a valid query (or one that only the data can fail) must pass", name, msg)
		}
	}
}

// unreachable is a Prometheus that does not answer.
type unreachable struct{ Querier }

func (unreachable) Query(context.Context, string, time.Time, ...promv1.Option) (model.Value, promv1.Warnings, error) {
	return nil, nil, errors.New("dial tcp 10.0.0.9:9090: connect: connection refused")
}

func TestCheckQueriesWithoutPrometheus(t *testing.T) {
	queries := []perfexpv1alpha1.CustomQuery{
		{Name: "bad-template", Query: `{{.Nope}}`},
		{Name: "db-cpu", Query: `up`},
	}
	problems, err := CheckQueries(t.Context(), unreachable{}, queries, PrecheckData("shop", "t", time.Now()), PrecheckScope("shop", "soak-1a2b3c4d", false), time.Now())
	var unavailable *UnavailableError
	if !errors.As(err, &unavailable) {
		t.Fatalf("err = %v, want an UnavailableError the caller can tell from a refusal", err)
	}
	if len(problems) != 1 || problems[0].Name != "bad-template" {
		t.Fatalf("problems %v; the template is checked without Prometheus", problems)
	}
}
