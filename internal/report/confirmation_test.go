package report

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func TestConfirmationSection(t *testing.T) {
	c := &perfexpv1alpha1.Confirmation{Sweep: "pool50-confirm", Change: perfexpv1alpha1.ChangeImproved, Repeats: 4, Runs: 8,
		EnvironmentTime: &metav1.Duration{Duration: 4*time.Hour + 2*time.Minute}, Elapsed: &metav1.Duration{Duration: 5 * time.Hour},
		StopReason: "every arm was decisive after 4 repeats", ReportRef: &perfexpv1alpha1.LocalObjectReference{Name: "pool50-confirm-report"}}
	section := ConfirmationSection(perfexpv1alpha1.ChangeInconclusive, c, "Confirmed=True, Decisive", "Improved after 4 blocks | p95 -12 %")
	for _, want := range []string{
		"## Confirmation\n", "One run against one run was Inconclusive", "sweep `pool50-confirm`, its report in ConfigMap `pool50-confirm-report`",
		"| Answer | **Improved** (Confirmed=True, Decisive) |", `| Why | Improved after 4 blocks \| p95 -12 % |`,
		"| Blocks | 4 (each one baseline and one variant run) |", "| Runs ended | 8 |", "| Environment time | 4h2m0s ", "| Elapsed | 5h0m0s ",
		"| Stopped | every arm was decisive after 4 repeats |",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("section lacks %q:\n%s", want, section)
		}
	}

	md := "# run\n\n## Comparison\n\ntext\n\n## History\n\nh\n"
	once := WithConfirmation(md, section)
	twice := WithConfirmation(once, section)
	if once != twice || !strings.HasPrefix(once, md[:len(md)-1]) || strings.Count(twice, "## Confirmation") != 1 || !strings.HasSuffix(once, section) {
		t.Errorf("writing the section twice does not replace it:\n%s", twice)
	}
	// In a whole report the confirmation's answer reads with the others, before the method.
	full := WithConfirmation(Markdown(sample()), section)
	if c, d := strings.Index(full, "## Confirmation"), strings.Index(full, "## How this was decided"); c < 0 || d < 0 || c > d ||
		WithConfirmation(full, section) != full {
		t.Errorf("the confirmation should come before how it was decided, once:\n%s", full)
	}
	if ConfirmationSection(perfexpv1alpha1.ChangeUnknown, nil, "", "") != "" {
		t.Error("a section without a confirmation")
	}
}
