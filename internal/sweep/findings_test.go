package sweep_test

import (
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/sweep"
)

// Two runs of one arm that ran different images of a service are named in the sweep's
// findings, and an arm whose environment differs from the baseline's beyond its variant is
// marked and named.
func TestCompareNamesEnvironmentDifferences(t *testing.T) {
	s := newSweep(withMatrix(perfexpv1alpha1.SweepDimension{Name: "users",
		Load: &perfexpv1alpha1.LoadDimension{Parameter: perfexpv1alpha1.LoadVUs, Values: []int32{20}}}), withRepeats(2))
	p, err := sweep.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	inv := func(image, logLevel string) []result.WorkloadInventory {
		return []result.WorkloadInventory{{Kind: "Deployment", Namespace: "shop", Name: "api", Containers: []result.ContainerInventory{{Name: "app", Image: image,
			Env: []result.EnvVar{{Name: "LOG_LEVEL", Value: logLevel}}}}}}
	}
	images := map[string][]result.WorkloadInventory{
		"pool-baseline-1": inv("shop/api:1.4", "info"), "pool-baseline-2": inv("shop/api:1.4", "info"),
		"pool-users-20-1": inv("shop/api:1.4", "debug"), "pool-users-20-2": inv("shop/api:1.5", "debug"),
	}
	outcomes := map[string]sweep.Outcome{}
	for _, run := range p.Runs {
		r := runResult(run.Name, 100, 50)
		r.Inventory = images[run.Name]
		outcomes[run.Name] = sweep.Outcome{Phase: perfexpv1alpha1.PhaseSucceeded, Result: r}
	}
	r := sweep.Compare(s, p, outcomes, nil)
	var texts []string
	for _, f := range r.Findings {
		texts = append(texts, f.Text)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{
		"Arm users-20's runs pool-users-20-1 and pool-users-20-2 differ in shop/api's image (container app): shop/api:1.4 in pool-users-20-1, shop/api:1.5 in pool-users-20-2.",
		"Arm users-20: The baseline and this arm also differ in shop/api's env var LOG_LEVEL (container app) beyond the declared variant: info in the baseline, debug here.",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("findings\n%s\nlack %q", all, want)
		}
	}
	if c := r.Arms[1].Comparison; c == nil || len(c.Confounds) != 1 || c.Confounds[0].Field != "env/app/LOG_LEVEL" {
		t.Errorf("arm's comparison is not marked: %+v", c)
	}
}
