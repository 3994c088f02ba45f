package judge

import (
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/result"
)

// A variant reverted during the run (the Drifted condition) makes otherwise valid results
// Invalid, with the field and its manager in the reason, whatever the objectives say.
func TestDriftedResultsAreInvalid(t *testing.T) {
	tests := []struct {
		name        string
		drifted     string
		wantVerdict perfexpv1alpha1.Verdict
	}{
		{"no drift", "", perfexpv1alpha1.VerdictPass},
		{"image put back by Argo CD", `Deployment shop/web spec.template.spec.containers[app].image is "web:1"; changed by "argocd-controller" (Apply)`, perfexpv1alpha1.VerdictInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &result.Result{Validity: perfexpv1alpha1.Valid}
			Drift(r, tt.drifted)
			if got := Verdict(r); got != tt.wantVerdict {
				t.Fatalf("verdict %s, want %s (reasons %v)", got, tt.wantVerdict, r.InvalidReasons)
			}
			if tt.drifted != "" && (len(r.InvalidReasons) != 1 || !strings.Contains(r.InvalidReasons[0], "argocd-controller")) {
				t.Fatalf("invalid reasons %v do not name the manager", r.InvalidReasons)
			}
		})
	}
}
