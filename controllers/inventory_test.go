package controllers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// inventoryLab is the lab with an analyzer that also records the inventory, counting its calls
// and the phase the experiment was in at each.
type inventoryLab struct {
	*lab
	mu     sync.Mutex
	phases []perfexpv1alpha1.Phase
}

func (l *inventoryLab) Inventory(_ context.Context, exp *perfexpv1alpha1.PerfExperiment, now metav1.Time) (*perfexpv1alpha1.Inventory, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.phases = append(l.phases, exp.Status.Phase)
	return &perfexpv1alpha1.Inventory{RecordedAt: now, Workloads: []perfexpv1alpha1.WorkloadInventory{{Kind: "Deployment", Namespace: exp.Namespace, Name: "api",
		Containers: []perfexpv1alpha1.ContainerInventory{{Name: "app", Image: "shop/api:1.4"}}}}}, nil
}

// The Running phase records the inventory once, after the warm-up, and it stays in the status
// for the analysis.
func TestRunningRecordsTheInventoryOnce(t *testing.T) {
	env := testenv.Start(t)
	env.Namespace(t, leaseNamespace)
	ns := env.Namespace(t, "inventory")
	l := &inventoryLab{lab: newLab()}
	startOperatorWith(t, env, l.lab, l.lab, l)
	exp := experiment(ns, "run", "inventory", 0)
	exp.Spec.Load.WarmUp = &perfexpv1alpha1.WarmUp{VUs: 1, Duration: metav1.Duration{Duration: time.Minute}}
	mustCreate(t, env.Client, exp)
	waitPhase(t, env.Client, ns, "run", perfexpv1alpha1.PhaseRunning)
	time.Sleep(500 * time.Millisecond) // a few more reconciles of Running
	l.finishLoad("run")
	got := waitPhase(t, env.Client, ns, "run", perfexpv1alpha1.PhaseSucceeded)

	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.phases) != 1 || l.phases[0] != perfexpv1alpha1.PhaseRunning {
		t.Fatalf("the inventory was read in phases %v, want once in Running", l.phases)
	}
	inv := got.Status.Inventory
	if inv == nil || len(inv.Workloads) != 1 || inv.Workloads[0].Containers[0].Image != "shop/api:1.4" {
		t.Fatalf("status.inventory = %+v", inv)
	}
	for _, h := range got.Status.PhaseHistory {
		if h.Phase == perfexpv1alpha1.PhaseRunning && inv.RecordedAt.Before(&h.Time) {
			t.Errorf("recorded at %s, before Running began at %s", inv.RecordedAt, h.Time)
		}
	}
}
