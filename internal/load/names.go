package load

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	k8slabels "k8s.io/apimachinery/pkg/labels"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// maxJobName keeps the pods of an Indexed Job whole: the Job controller names them
// <job>-<index>-<5 random characters> and gives them the hostname <job>-<index>, which must be
// a DNS label (63 characters). With at most 64 pods per scenario the index has two digits.
const maxJobName = 63 - len("-63-") - 5

// maxTestRunName leaves room for the names k6-operator derives from a TestRun's: its Jobs
// <name>-initializer and <name>-starter, and its runner Services <name>-service-<index>.
const maxTestRunName = 63 - len("-initializer")

// maxSetupJobName keeps the setup pod's generated name (<job>-<5 random characters>) whole.
const maxSetupJobName = 63 - 1 - 5

// maxConfigMapName keeps ConfigMap names short enough to read and to use as label values.
const maxConfigMapName = 63

// Label values perfexp puts on what it creates, beside the experiment, test id and scenario.
const (
	labelManagedBy = "app.kubernetes.io/managed-by"
	labelComponent = "app.kubernetes.io/component"
	managedBy      = "perfexp"
	componentLoad  = "load"
	componentSetup = "setup"
	// componentTeardown marks the teardown Job and its pods, which Stop leaves running: the
	// teardown runs after the load is stopped.
	componentTeardown = "teardown"
	k6Container       = "k6"
	setupContainer    = "setup"
)

// childName is "<exp>-<suffix>", shortened with a hash of the full name when it is longer than
// limit (see perfexpv1alpha1.ChildName).
func childName(exp, suffix string, limit int) string {
	return perfexpv1alpha1.ChildName(exp, suffix, limit)
}

// UnitName is the name of the Job and script ConfigMap of a scenario or the warm-up.
func UnitName(exp *perfexpv1alpha1.PerfExperiment, unit string) string {
	return childName(exp.Name, "k6-"+unit, maxJobName)
}

func testRunName(exp *perfexpv1alpha1.PerfExperiment, unit string) string {
	return childName(exp.Name, "k6-"+unit, maxTestRunName)
}

// SetupJobName is the name of the data-preparation Job.
func SetupJobName(exp *perfexpv1alpha1.PerfExperiment) string {
	return childName(exp.Name, "setup", maxSetupJobName)
}

// TeardownJobName is the name of the teardown Job.
func TeardownJobName(exp *perfexpv1alpha1.PerfExperiment) string {
	return childName(exp.Name, "teardown", maxSetupJobName)
}

// SummariesName is the name of the ConfigMap holding the k6 summaries of an experiment's pods.
func SummariesName(exp *perfexpv1alpha1.PerfExperiment) string {
	return childName(exp.Name, "summaries", maxConfigMapName)
}

// SummaryKey is the key of one pod's summary in the summaries ConfigMap.
func SummaryKey(unit string, index int) string {
	return unit + "-" + strconv.Itoa(index) + ".json"
}

func labels(exp *perfexpv1alpha1.PerfExperiment, component, unit string) map[string]string {
	l := map[string]string{
		perfexpv1alpha1.LabelExperiment: exp.Name,
		perfexpv1alpha1.LabelTestID:     exp.Status.TestID,
		labelManagedBy:                  managedBy,
		labelComponent:                  component,
	}
	if len(exp.Name) > 63 {
		// A label value holds at most 63 characters; the test id, which is unique per run,
		// selects the objects of such an experiment.
		delete(l, perfexpv1alpha1.LabelExperiment)
	}
	if unit != "" {
		l[perfexpv1alpha1.LabelScenario] = unit
	}
	return l
}

// selector selects every object perfexp created for one run of an experiment.
func selector(exp *perfexpv1alpha1.PerfExperiment) map[string]string {
	return map[string]string{perfexpv1alpha1.LabelTestID: exp.Status.TestID, labelManagedBy: managedBy}
}

func unitSelector(exp *perfexpv1alpha1.PerfExperiment, unit string) map[string]string {
	s := selector(exp)
	s[perfexpv1alpha1.LabelScenario] = unit
	s[labelComponent] = componentLoad
	return s
}

// OwnSelector selects every Pod and Job the runner creates or reads (k6-operator's runner pods
// get the label through the TestRun's runner metadata), so the manager may cache only those
// instead of every Pod and Job in the cluster.
func OwnSelector() k8slabels.Selector {
	return k8slabels.SelectorFromSet(k8slabels.Set{labelManagedBy: managedBy})
}

// RunnerPodPattern matches the names of the k6 pods of an experiment's scenarios (not of its
// warm-up), for reading their CPU and memory from cAdvisor after they are gone: an Indexed
// Job's pods are <job>-<index>-<suffix>, and k6-operator names its runner pods after the
// TestRun the same way.
func RunnerPodPattern(exp *perfexpv1alpha1.PerfExperiment) string {
	names := map[string]bool{}
	var alts []string
	for _, u := range scenarioUnits(exp) {
		for _, n := range []string{UnitName(exp, u.name), testRunName(exp, u.name)} {
			if !names[n] {
				names[n] = true
				alts = append(alts, regexp.QuoteMeta(n))
			}
		}
	}
	if len(alts) == 0 {
		return ""
	}
	sort.Strings(alts)
	return "(?:" + strings.Join(alts, "|") + ")-[0-9]+-[a-z0-9]+"
}

// IsWarmUpSummaryKey says whether a key of the summaries ConfigMap holds the warm-up pod's
// summary: its requests come before the measured window and belong to no scenario.
func IsWarmUpSummaryKey(key string) bool {
	rest, ok := strings.CutPrefix(key, WarmUpName+"-")
	if !ok {
		return false
	}
	n, ok := strings.CutSuffix(rest, ".json")
	_, err := strconv.Atoi(n)
	return ok && err == nil
}
