package v1alpha1_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// An experiment stays in the queue it joined: status.queue, once set, wins over spec.queue.
func TestQueueName(t *testing.T) {
	tests := []struct {
		name                      string
		specQueue, target, status string
		want                      string
	}{
		{name: "target namespace by default", target: "library", want: "library"},
		{name: "spec.queue over the target namespace", specQueue: "shared", target: "library", want: "shared"},
		{name: "status.queue once joined", specQueue: "moved", target: "library", status: "shared", want: "shared"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf"}}
			e.Spec.Queue, e.Spec.TargetNamespace, e.Status.Queue = tt.specQueue, tt.target, tt.status
			if got := e.QueueName(); got != tt.want {
				t.Errorf("QueueName = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTargetNamespace(t *testing.T) {
	e := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf"}}
	if got := e.TargetNamespace(); got != "perf" {
		t.Errorf("TargetNamespace = %q, want the experiment's namespace perf", got)
	}
	e.Spec.TargetNamespace = "library"
	if got := e.TargetNamespace(); got != "library" {
		t.Errorf("TargetNamespace = %q, want spec.targetNamespace library", got)
	}
}

// A test ID is a label value unique per run, even for names near the 253-character limit.
func TestTestID(t *testing.T) {
	uid := types.UID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
	tests := []struct {
		name, expName, want string
	}{
		{name: "short name", expName: "checkout-v2", want: "checkout-v2-0f1e2d3c"},
		{name: "long name cut to fit, no trailing separator", expName: strings.Repeat("a", 53) + "-.b" + strings.Repeat("c", 100),
			want: strings.Repeat("a", 53) + "-0f1e2d3c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Name: tt.expName, UID: uid}}
			got := e.TestID()
			if got != tt.want {
				t.Errorf("TestID = %q, want %q", got, tt.want)
			}
			if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
				t.Errorf("TestID %q is not a label value: %v", got, errs)
			}
		})
	}
}
