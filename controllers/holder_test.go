package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/queue"
	"github.com/perfexp/perfexp/internal/testenv"
)

// The holder of a queue's lock is judged from the API server, by the name the Lease records
// and the UID it holds with, never from the (possibly stale) cache.
func TestHolderAlive(t *testing.T) {
	exp := func(name, uid string, phase perfexpv1alpha1.Phase) *perfexpv1alpha1.PerfExperiment {
		e := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: name, UID: types.UID(uid)}}
		e.Status.Phase = phase
		e.Status.Queue = "library"
		return e
	}
	holder := queue.Holder{UID: "uid-1", Namespace: "perf", Name: "baseline"}
	tests := []struct {
		name   string
		server []client.Object // what the API server holds
		cache  []client.Object // what the cache shows (may lag)
		holder queue.Holder
		want   bool
	}{
		{name: "running holder the cache does not show yet", server: []client.Object{exp("baseline", "uid-1", perfexpv1alpha1.PhaseRunning)},
			holder: holder, want: true},
		{name: "restoring holder", server: []client.Object{exp("baseline", "uid-1", perfexpv1alpha1.PhaseRestoring)},
			holder: holder, want: true},
		{name: "holder that the cache still shows running but that is analysing",
			server: []client.Object{exp("baseline", "uid-1", perfexpv1alpha1.PhaseAnalyzing)},
			cache:  []client.Object{exp("baseline", "uid-1", perfexpv1alpha1.PhaseRunning)}, holder: holder, want: false},
		{name: "holder that ended", server: []client.Object{exp("baseline", "uid-1", perfexpv1alpha1.PhaseFailed)},
			holder: holder, want: false},
		{name: "holder that is gone, though the cache still shows it",
			cache: []client.Object{exp("baseline", "uid-1", perfexpv1alpha1.PhaseRunning)}, holder: holder, want: false},
		{name: "an experiment re-created under the holder's name is not the holder",
			server: []client.Object{exp("baseline", "uid-2", perfexpv1alpha1.PhaseRunning)}, holder: holder, want: false},
		{name: "a Lease without the holder's name falls back to the queue's members",
			cache:  []client.Object{exp("baseline", "uid-1", perfexpv1alpha1.PhasePreparing)},
			holder: queue.Holder{UID: "uid-1"}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(tt.cache...).Build()
			server := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(tt.server...).Build()
			r := &PerfExperimentReconciler{Client: cache, APIReader: server}
			var mates []*perfexpv1alpha1.PerfExperiment
			for _, o := range tt.cache {
				mates = append(mates, o.(*perfexpv1alpha1.PerfExperiment))
			}
			got, err := r.holderAlive(t.Context(), mates, tt.holder)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("holderAlive = %v, want %v", got, tt.want)
			}
		})
	}
}
