package variant

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// listCounter counts the list requests a client sends, by resource ("<resource> patched by
// another" for the lists by the label of other experiments' patches).
type listCounter struct {
	rt     http.RoundTripper
	mu     *sync.Mutex
	counts map[string]int
}

func (c listCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && r.URL.Query().Get("watch") == "" {
		// .../namespaces/<ns>/<resource> is a list; .../<resource>/<name> a get.
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		if len(parts) >= 2 && parts[len(parts)-3] == "namespaces" {
			key := parts[len(parts)-1]
			if strings.Contains(r.URL.Query().Get("labelSelector"), LabelPatchedBy) {
				key += " patched by another"
			}
			c.mu.Lock()
			c.counts[key]++
			c.mu.Unlock()
		}
	}
	return c.rt.RoundTrip(r)
}

// TestPreparePollsListNothing counts what each Prepare call lists: the first, before any write,
// lists every kind a variant can patch in the namespace (another experiment's patch may be in
// force); the polls of the rollouts that follow list none of them. Before, every poll listed
// Deployments and StatefulSets by label and ConfigMaps, Services, HPAs (and Kafkas where
// served) by metadata, straight from the API server: six requests a second per experiment in
// Preparing, for nothing, since the experiment holds its environment's lock.
func TestPreparePollsListNothing(t *testing.T) {
	te := startEnv(t)
	ns := te.Namespace(t, "cost")
	create(t, te.Client, deployment(ns, "api", nil, service("app")), deployment(ns, "worker", nil, service("app")),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"pool": "10"}})
	rollOut(t, te.Client, ns)
	var mu sync.Mutex
	counts := map[string]int{}
	cfg := rest.CopyConfig(te.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return listCounter{rt: rt, mu: &mu, counts: counts} }
	c, err := client.New(cfg, client.Options{Scheme: te.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	e := New(c, Options{})
	exp := experiment(t, te.Client, ns, "pool", &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
		WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Selector: selectAll()},
		Env:              &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: "HTTP_MAXPOOLSIZE", Value: "100"}}},
	}}})
	take := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range counts {
			out[k] = v
			delete(counts, k)
		}
		return out
	}
	// The variant's own resolve lists the Deployments its selector matches; the check for other
	// experiments' patches lists these.
	checked := []string{"deployments patched by another", "statefulsets patched by another", "configmaps", "services", "horizontalpodautoscalers", "kafkas"}

	if err := expect(e.Prepare(t.Context(), exp)); err != nil {
		t.Fatalf("first Prepare: %v", err)
	}
	first := take()
	for _, r := range checked {
		if first[r] == 0 && r != "kafkas" {
			t.Errorf("the first Prepare listed no %s (%v): the check for other experiments' patches did not run", r, first)
		}
	}
	for i := range 3 {
		if err := expect(e.Prepare(t.Context(), exp)); err != nil {
			t.Fatalf("poll %d: %v", i, err)
		}
		got := take()
		for _, r := range checked {
			if got[r] > 0 {
				t.Errorf("poll %d of the rollouts listed %s %d times (all lists: %v); want none", i, r, got[r], got)
			}
		}
	}
	rollOut(t, te.Client, ns)
	if err := done(e.Prepare(t.Context(), exp)); err != nil {
		t.Fatalf("last Prepare: %v", err)
	}
	got := take()
	for _, r := range checked {
		if got[r] > 0 {
			t.Errorf("the last Prepare listed %s %d times (all lists: %v); want none", r, got[r], got)
		}
	}
}
