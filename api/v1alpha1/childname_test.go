package v1alpha1_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func TestChildName(t *testing.T) {
	tests := []struct {
		name, exp, suffix string
		limit             int
		want              string
	}{
		{name: "a short name is kept", exp: "baseline", suffix: "k6-checkout", limit: 54, want: "baseline-k6-checkout"},
		{name: "a name at the limit is kept", exp: strings.Repeat("a", 45), suffix: "k6-s", limit: 50, want: strings.Repeat("a", 45) + "-k6-s"},
		{name: "one over the limit is hashed", exp: strings.Repeat("a", 46), suffix: "k6-s", limit: 50},
		{name: "the longest name is hashed", exp: strings.Repeat("a", 253), suffix: "report", limit: 63},
		{name: "dots become dashes, hashed so a.b and a-b differ", exp: "release.v2", suffix: "k6-s", limit: 54},
		{name: "a cut that ends in a dash loses it", exp: strings.Repeat("ab-", 30), suffix: "setup", limit: 57},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := perfexpv1alpha1.ChildName(tt.exp, tt.suffix, tt.limit)
			if len(got) > tt.limit {
				t.Fatalf("ChildName() = %q, %d characters, over %d", got, len(got), tt.limit)
			}
			if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
				t.Fatalf("ChildName() = %q is not a DNS label: %v", got, errs)
			}
			if tt.want != "" && got != tt.want {
				t.Fatalf("ChildName() = %q, want %q", got, tt.want)
			}
			if again := perfexpv1alpha1.ChildName(tt.exp, tt.suffix, tt.limit); again != got {
				t.Fatalf("not deterministic: %q then %q", got, again)
			}
			if other := perfexpv1alpha1.ChildName(tt.exp, tt.suffix+"x", tt.limit); other == got {
				t.Fatalf("two suffixes gave the same name %q", got)
			}
			if other := perfexpv1alpha1.ChildName(strings.ReplaceAll(tt.exp, ".", "-")+"x", tt.suffix, tt.limit); other == got {
				t.Fatalf("two experiments gave the same name %q", got)
			}
		})
	}
	if a, b := perfexpv1alpha1.ChildName("a.b", "s", 63), perfexpv1alpha1.ChildName("a-b", "s", 63); a == b {
		t.Fatalf("a.b and a-b share the child name %q", a)
	}
}

func TestReportName(t *testing.T) {
	exp := &perfexpv1alpha1.PerfExperiment{}
	exp.Name = "checkout"
	if got := exp.ReportName(); got != "checkout-report" {
		t.Fatalf("ReportName() = %q", got)
	}
	exp.Name = strings.Repeat("x", 253)
	if got := exp.ReportName(); len(got) > 63 || validation.IsDNS1123Label(got) != nil {
		t.Fatalf("ReportName() of a 253-character name = %q", got)
	}
}

// Every ConfigMap perfexp publishes has a name derived the one way, so a long experiment or
// sweep name never gives one the API server refuses.
func TestPublishedNames(t *testing.T) {
	exp := &perfexpv1alpha1.PerfExperiment{}
	sw := &perfexpv1alpha1.PerfSweep{}
	exp.Name, sw.Name = "checkout", "pool-size"
	if got := exp.DashboardName(); got != "checkout-dashboard" {
		t.Errorf("DashboardName() = %q", got)
	}
	if got := sw.ReportName(); got != "pool-size-report" {
		t.Errorf("sweep ReportName() = %q", got)
	}
	exp.Name, sw.Name = strings.Repeat("x", 250), strings.Repeat("y", 253)
	for what, got := range map[string]string{"dashboard": exp.DashboardName(), "sweep report": sw.ReportName()} {
		if len(got) > 63 || validation.IsDNS1123Label(got) != nil {
			t.Errorf("%s name %q of a long name: want a DNS label of at most 63 characters", what, got)
		}
	}
}
