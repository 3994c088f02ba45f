package load

import (
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// The runner pod pattern matches every k6 pod of the experiment's scenarios, as the Job
// controller and k6-operator name them, and nothing of its warm-up or of another experiment.
func TestRunnerPodPattern(t *testing.T) {
	long := strings.Repeat("checkout-release-", 4)
	exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Name: long}}
	exp.Spec.Load.WarmUp = &perfexpv1alpha1.WarmUp{VUs: 1, Duration: metav1.Duration{Duration: time.Minute}}
	exp.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "checkinout"}, {Name: "search"}}
	re := regexp.MustCompile("^(?:" + RunnerPodPattern(exp) + ")$")
	other := exp.DeepCopy()
	other.Name = "other"
	cases := []struct {
		pod  string
		want bool
	}{
		{UnitName(exp, "checkinout") + "-0-x7k2q", true},
		{UnitName(exp, "checkinout") + "-7-abcde", true},
		{UnitName(exp, "search") + "-0-zzzzz", true},
		{testRunName(exp, "search") + "-1-q2w3e", true},
		{UnitName(exp, WarmUpName) + "-0-abcde", false},
		{UnitName(other, "checkinout") + "-0-abcde", false},
		{UnitName(exp, "checkinout"), false},
	}
	for _, tc := range cases {
		if got := re.MatchString(tc.pod); got != tc.want {
			t.Errorf("%s: matched %v, want %v", tc.pod, got, tc.want)
		}
	}
	if RunnerPodPattern(&perfexpv1alpha1.PerfExperiment{}) != "" {
		t.Error("an experiment without scenarios has a pattern")
	}
}

func TestIsWarmUpSummaryKey(t *testing.T) {
	for key, want := range map[string]bool{
		SummaryKey(WarmUpName, 0): true, SummaryKey(WarmUpName, 12): true, SummaryKey("checkout", 0): false,
		SummaryKey("warm-up-x", 0): false, "warm-up-.json": false, "warm-up-1.txt": false,
	} {
		if got := IsWarmUpSummaryKey(key); got != want {
			t.Errorf("%s: %v, want %v", key, got, want)
		}
	}
}
