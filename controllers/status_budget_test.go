package controllers

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/text"
)

// unboundedString is the length given to status strings the CRD does not bound. They hold
// numbers, Kubernetes names and URLs, which stay well below it in practice.
const unboundedString = 128

// largestStatus builds the largest status perfexp can write: every list at its CRD maxItems,
// every string at its maxLength (unboundedString where it has none), except where perfexp
// bounds it tighter: condition messages are cut to 1024 bytes (setCondition), not the 32 KiB
// metav1.Condition admits, snapshot copies take 512 KiB in all (internal/variant), not
// 256 x 64 KiB, and the inventory MaxInventoryBytes.
func largestStatus(t *testing.T) perfexpv1alpha1.PerfExperimentStatus {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.Root(), "config", "crd", "bases", "perfexp.dev_perfexperiments.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema schema `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	filled := fill("status", crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"])
	raw, err := json.Marshal(filled)
	if err != nil {
		t.Fatal(err)
	}
	var st perfexpv1alpha1.PerfExperimentStatus
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	for i := range st.Conditions {
		st.Conditions[i].Message = text.Truncate(st.Conditions[i].Message, 1024)
	}
	st.Inventory.Bound() // the analyzer bounds what it records (MaxInventoryBytes)
	perObject := 512 * 1024 / len(st.Environment.Touched)
	for i := range st.Environment.Touched {
		st.Environment.Touched[i].Snapshot = strings.Repeat("s", perObject)
	}
	return st
}

type schema struct {
	Type       string            `json:"type"`
	Format     string            `json:"format"`
	Enum       []any             `json:"enum"`
	MaxLength  *int              `json:"maxLength"`
	MaxItems   *int              `json:"maxItems"`
	Properties map[string]schema `json:"properties"`
	Items      *schema           `json:"items"`
}

// durationFields are the status fields of type metav1.Duration (a string in the schema): they
// get the longest text a Duration prints, which is what they can hold.
var durationFields = map[string]bool{"environmentTime": true, "elapsed": true, "totalDuration": true}

func fill(name string, s schema) any {
	switch s.Type {
	case "object":
		out := map[string]any{}
		for k, p := range s.Properties {
			out[k] = fill(k, p)
		}
		return out
	case "array":
		n := 1
		if s.MaxItems != nil {
			n = *s.MaxItems
		}
		out := make([]any, n)
		for i := range out {
			out[i] = fill(name, *s.Items)
		}
		return out
	case "string":
		switch {
		case len(s.Enum) > 0:
			return s.Enum[0]
		case s.Format == "date-time":
			return "2026-01-01T00:00:00Z"
		case durationFields[name]:
			return time.Duration(math.MaxInt64).String()
		case s.MaxLength != nil:
			return strings.Repeat("x", *s.MaxLength)
		}
		return strings.Repeat("x", unboundedString)
	case "integer", "number":
		return 1
	case "boolean":
		return true
	}
	return nil
}

func TestFitStatus(t *testing.T) {
	largest := largestStatus(t)
	spec := func(scriptBytes int) perfexpv1alpha1.PerfExperimentSpec {
		var s perfexpv1alpha1.PerfExperimentSpec
		s.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "s", Script: perfexpv1alpha1.ScriptSource{Inline: strings.Repeat("k", scriptBytes)}}}
		return s
	}
	full := &perfexpv1alpha1.PerfExperiment{Status: largest}
	t.Logf("the largest status perfexp can write: %d bytes of JSON", objectSize(full))

	// Fewer touched objects (32 instead of 256) with the same 512 KiB of snapshot copies: a
	// large but plausible experiment.
	plausible := largest.DeepCopy()
	plausible.Environment.Touched = plausible.Environment.Touched[:32]
	for i := range plausible.Environment.Touched {
		plausible.Environment.Touched[i].Snapshot = strings.Repeat("s", 512*1024/32)
	}
	t.Logf("a plausible large status: %d bytes", objectSize(&perfexpv1alpha1.PerfExperiment{Status: *plausible}))
	all := []string{"results.workloads", "comparison.metrics", "results.scenarios", "inventory.workloads", "environment.touched[].snapshot"}

	tests := []struct {
		name        string
		exp         *perfexpv1alpha1.PerfExperiment
		wantTrimmed []string
	}{
		{name: "a status that fits is left alone",
			exp: &perfexpv1alpha1.PerfExperiment{Spec: spec(1000), Status: perfexpv1alpha1.PerfExperimentStatus{Phase: perfexpv1alpha1.PhaseRunning}}},
		// The inventory is recorded while the run is small and read by the analysis before it
		// writes its results: leaving it out then loses nothing the report does not keep.
		{name: "a plausible large status loses the details the report keeps, not the snapshot copies",
			exp: &perfexpv1alpha1.PerfExperiment{Spec: spec(1000), Status: *plausible.DeepCopy()}, wantTrimmed: all[:4]},
		{name: "a running experiment's inventory fits beside its snapshot copies",
			exp: &perfexpv1alpha1.PerfExperiment{Spec: spec(1000), Status: perfexpv1alpha1.PerfExperimentStatus{Phase: perfexpv1alpha1.PhaseRunning,
				Environment: plausible.Environment.DeepCopy(), Inventory: plausible.Inventory.DeepCopy(), Conditions: plausible.Conditions}}},
		{name: "the largest status loses every detail and the snapshot copies",
			exp: &perfexpv1alpha1.PerfExperiment{Spec: spec(1000), Status: *largest.DeepCopy()}, wantTrimmed: all},
		{name: "a spec near the budget leaves room for little more than the essentials",
			exp: &perfexpv1alpha1.PerfExperiment{Spec: spec(objectBudget - 600*1024), Status: *plausible.DeepCopy()}, wantTrimmed: all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.exp.Status.DeepCopy()
			got := fitStatus(tt.exp)
			if strings.Join(got, ",") != strings.Join(tt.wantTrimmed, ",") {
				t.Errorf("trimmed %v, want %v", got, tt.wantTrimmed)
			}
			if size := objectSize(tt.exp); size > objectBudget && len(got) < len(statusTrims) {
				t.Errorf("%d bytes after trimming, over the budget of %d with trims left", size, objectBudget)
			}
			// What is never left out.
			st := tt.exp.Status
			if st.Phase != before.Phase || len(st.Conditions) != len(before.Conditions) || st.Verdict != before.Verdict ||
				(before.Environment != nil && len(st.Environment.Touched) != len(before.Environment.Touched)) ||
				(before.Window != nil && st.Window == nil) || (before.ReportRef != nil && st.ReportRef == nil) {
				t.Errorf("trimming changed what must stay: %+v", st)
			}
		})
	}
}
