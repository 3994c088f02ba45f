package analysis

import (
	"regexp"
	"strings"
	"testing"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func testData() TemplateData {
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	return templateData("shop", "soak-1a2b3c4d", start, start.Add(5*time.Minute), start.Add(35*time.Minute))
}

func TestRenderQuery(t *testing.T) {
	tests := []struct {
		name, query, want string
	}{
		{"every placeholder", `x{ns="{{.Namespace}}",t="{{.TestID}}"} {{.Start}} {{.WarmUpEnd}} {{.End}} [{{.Window}}]`,
			`x{ns="shop",t="soak-1a2b3c4d"} 2026-11-24T10:00:00Z 2026-11-24T10:05:00Z 2026-11-24T10:35:00Z [1800s]`},
		{"spaces inside the braces", "avg_over_time(up{namespace=\"{{ .Namespace }}\"}[{{\t.Window\n}}])", `avg_over_time(up{namespace="shop"}[1800s])`},
		{"no placeholder", `sum(up)`, `sum(up)`},
		{"single braces and closing pairs are PromQL", `sum(x{a="}}"}) + y{} {`, `sum(x{a="}}"}) + y{} {`},
		{"placeholders back to back", `{{.Namespace}}{{.Namespace}}`, `shopshop`},
		{"a brace before a placeholder", `{a}{{.Window}}`, `{a}1800s`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RenderQuery(tt.query, testData())
			if err != nil || got != tt.want {
				t.Fatalf("RenderQuery(%q) = %q, %v; want %q", tt.query, got, err, tt.want)
			}
		})
	}
}

// A Go template ran these (the first two render gigabytes, or loop for ever); the renderer
// refuses every one at once, naming what it refused and listing the placeholders.
func TestRenderQueryRefuses(t *testing.T) {
	tests := []struct {
		name, query, named string
	}{
		{"nested range over integers", `{{range 100000}}{{range 100000}}x{{end}}{{end}}`, "{{range 100000}}"},
		{"a loop with a variable", `{{range $i, $e := 1000000000}}{{$i}}{{end}}`, "{{range $i, $e := 1000000000}}"},
		{"unknown field", `up{x="{{.Nope}}"}`, "{{.Nope}}"},
		{"function call", "{{printf `%s` .Namespace}}", "{{printf `%s` .Namespace}}"},
		{"trim marker", `{{- .Window }}`, "{{- .Window }}"},
		{"comment", `{{/* c */}}up`, "{{/* c */}}"},
		{"the whole data", `{{.}}`, "{{.}}"},
		{"three braces", `{{{.Namespace}}`, "{{{.Namespace}}"},
		{"lower case", `{{.namespace}}`, "{{.namespace}}"},
		{"not closed", `up{x="{{.Namespace"}`, `{{.Namespace"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			got, err := RenderQuery(tt.query, testData())
			if took := time.Since(start); took > time.Second {
				t.Errorf("took %s", took)
			}
			if err == nil {
				t.Fatalf("RenderQuery(%q) = %.80q, want an error", tt.query, got)
			}
			for _, want := range []string{tt.named, "{{.Namespace}}, {{.TestID}}, {{.Start}}, {{.End}}, {{.WarmUpEnd}} and {{.Window}}"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
		})
	}
	if _, err := RenderQuery(strings.Repeat("{{.Window}}", MaxQueryLength/11+1), testData()); err == nil {
		t.Error("a query over MaxQueryLength was rendered")
	}
}

// The pre-run check refuses the attack without asking Prometheus.
func TestCheckQueriesRefusesTemplateActions(t *testing.T) {
	queries := []perfexpv1alpha1.CustomQuery{{Name: "loop", Query: `{{range 100000}}{{range 100000}}x{{end}}{{end}}`}}
	problems, _ := CheckQueries(t.Context(), unreachable{}, queries, PrecheckData("shop", "t", time.Now()), PrecheckScope("shop", "soak-1a2b3c4d", false), time.Now())
	if len(problems) != 1 || !strings.Contains(problems[0].Message, "{{range 100000}} is not a placeholder") {
		t.Fatalf("problems %v", problems)
	}
}

// FuzzRenderQuery checks that the operator and the API server agree on every query: the
// renderer accepts exactly what the CRD's rule (api/v1alpha1.QueryPattern) admits, and its
// output never exceeds MaxRenderedLength.
func FuzzRenderQuery(f *testing.F) {
	for _, seed := range []string{
		`sum(rate(x{namespace="{{.Namespace}}"}[{{ .Window }}]))`, `{{range 9}}x{{end}}`, `{{{.End}}}`, `{`, `{{`,
		`{{.End`, `}}{{.TestID}}{`, "{{\v.Start\f}}", `{a}{{.WarmUpEnd}}`, `{{.Window}}{{ .Nope }}`,
	} {
		f.Add(seed)
	}
	admitted := regexp.MustCompile(perfexpv1alpha1.QueryPattern)
	data := testData()
	f.Fuzz(func(t *testing.T, query string) {
		if len(query) > MaxQueryLength {
			return // the CRD's MaxLength refuses it first
		}
		out, err := RenderQuery(query, data)
		if admit := admitted.MatchString(query); admit != (err == nil) {
			t.Fatalf("query %q: admitted by the CRD %v, rendered with error %v", query, admit, err)
		}
		if len(out) > MaxRenderedLength {
			t.Fatalf("query of %d bytes rendered into %d, over %d", len(query), len(out), MaxRenderedLength)
		}
	})
}
