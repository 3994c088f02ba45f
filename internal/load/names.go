package load

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	k8slabels "k8s.io/apimachinery/pkg/labels"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// maxChildName keeps Job names valid as the value of the job-name label the Job controller
// puts on its pods (at most 63 characters).
const maxChildName = 63

// maxTestRunName leaves room for the "-<index>" k6-operator appends to a TestRun's name for
// its runner Jobs.
const maxTestRunName = 58

// Label values perfexp puts on what it creates, beside the experiment, test id and scenario.
const (
	labelManagedBy = "app.kubernetes.io/managed-by"
	labelComponent = "app.kubernetes.io/component"
	managedBy      = "perfexp"
	componentLoad  = "load"
	componentSetup = "setup"
	k6Container    = "k6"
	setupContainer = "setup"
)

// childName is "<exp>-<suffix>", shortened with a hash of the full name when it is longer than
// limit, so it stays unique, valid and recognisable.
func childName(exp, suffix string, limit int) string {
	name := exp + "-" + suffix
	if len(name) <= limit {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	hash := hex.EncodeToString(sum[:])[:8]
	keep := limit - len(hash) - 1
	return strings.TrimRight(name[:keep], "-.") + "-" + hash
}

// UnitName is the name of the Job (or TestRun) and ConfigMap of a scenario or the warm-up.
func UnitName(exp *perfexpv1alpha1.PerfExperiment, unit string) string {
	return childName(exp.Name, "k6-"+unit, maxChildName)
}

func testRunName(exp *perfexpv1alpha1.PerfExperiment, unit string) string {
	return childName(exp.Name, "k6-"+unit, maxTestRunName)
}

// SetupJobName is the name of the data-preparation Job.
func SetupJobName(exp *perfexpv1alpha1.PerfExperiment) string {
	return childName(exp.Name, "setup", maxChildName)
}

// SummariesName is the name of the ConfigMap holding the k6 summaries of an experiment's pods.
func SummariesName(exp *perfexpv1alpha1.PerfExperiment) string {
	return childName(exp.Name, "summaries", maxChildName)
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
