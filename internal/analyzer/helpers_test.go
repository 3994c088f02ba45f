package analyzer_test

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/testexp"
)

// experiment is a minimal valid experiment: one scenario "checkinout" of one VU for a minute.
func experiment(ns, name string) *perfexpv1alpha1.PerfExperiment {
	return testexp.New(ns, name, testexp.WithScenarios(testexp.Constant("checkinout", 1, time.Minute)))
}

func mustCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

// get reads an experiment; nil when it is gone.
func get(t *testing.T, c client.Client, ns, name string) *perfexpv1alpha1.PerfExperiment {
	t.Helper()
	exp := &perfexpv1alpha1.PerfExperiment{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, exp); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	return exp
}

func condition(exp *perfexpv1alpha1.PerfExperiment, typ string) *metav1.Condition {
	return meta.FindStatusCondition(exp.Status.Conditions, typ)
}

// eventually retries check until it returns nil or the timeout passes.
var eventually = testenv.Eventually
