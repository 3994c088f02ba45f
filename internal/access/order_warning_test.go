package access_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/perfexp/perfexp/internal/testenv"
)

// warnings collects the Warning headers the API server returns, as kubectl prints them.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.seen
	w.seen = nil
	return out
}

const orderPolicy = "ValidatingAdmissionPolicy 'perfexp-interleaved-order'"

// config/policy/interleaved_order.yaml warns, and refuses nothing, when a sweep that compares
// arms with a baseline runs every repeat in the declared order.
func storyWarnsOfAFixedOrder(t *testing.T, env *testenv.Env) {
	w := &warnings{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandlerWithContext = w
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	variant := map[string]any{"workloads": []any{map[string]any{"kind": "Deployment", "names": []any{"web"}, "replicas": int64(2)}}}
	other := map[string]any{"workloads": []any{map[string]any{"kind": "Deployment", "names": []any{"web"}, "replicas": int64(3)}}}
	arms := []any{map[string]any{"name": "two", "variant": variant}, map[string]any{"name": "three", "variant": other}}
	envMatrix := []any{map[string]any{"name": "pool", "env": map[string]any{"names": []any{"web"}, "variable": "POOL", "values": []any{"1", "2"}}}}
	loadMatrix := []any{map[string]any{"name": "vus", "load": map[string]any{"parameter": "VUs", "values": []any{int64(1), int64(2)}}}}
	withOrder := func(order string, spec map[string]any) map[string]any {
		spec["template"] = template("", nil)
		if order != "" {
			spec["order"] = order
		}
		return spec
	}
	tests := []struct {
		name string
		spec map[string]any
		// warns is a part of the warning; empty means no warning from this policy.
		warns []string
	}{
		{name: "Interleaved arms against the baseline",
			spec: withOrder("Interleaved", map[string]any{"arms": arms}),
			warns: []string{"spec.order is Interleaved", "comparisons of arms two, three with the baseline are NOT ERROR-CONTROLLED",
				"Use order: Randomized (the default)", `docs/sweeps.md, section "Order, names and the queue"`, "The sweep is accepted."}},
		{name: "Interleaved, one arm",
			spec:  withOrder("Interleaved", map[string]any{"arms": arms[:1]}),
			warns: []string{"comparisons of arm two with the baseline are NOT ERROR-CONTROLLED"}},
		{name: "Interleaved matrix over an env var",
			spec:  withOrder("Interleaved", map[string]any{"matrix": envMatrix}),
			warns: []string{"comparisons of the matrix over pool with the baseline are NOT ERROR-CONTROLLED"}},
		{name: "Interleaved arms and a matrix",
			spec:  withOrder("Interleaved", map[string]any{"arms": arms[:1], "matrix": envMatrix}),
			warns: []string{"comparisons of arm two and of the matrix over pool with the baseline"}},
		{name: "Interleaved arm without a variant against a baseline with one",
			spec: withOrder("Interleaved", map[string]any{"baseline": map[string]any{"variant": variant},
				"arms": []any{map[string]any{"name": "as-deployed", "load": map[string]any{"scenarios": []any{"s"}}}}}),
			warns: []string{"comparisons of arm as-deployed"}},
		{name: "Randomized arms", spec: withOrder("Randomized", map[string]any{"arms": arms})},
		{name: "the default order", spec: withOrder("", map[string]any{"arms": arms, "matrix": envMatrix})},
		{name: "Interleaved load curve: nothing is compared", spec: withOrder("Interleaved", map[string]any{"matrix": loadMatrix})},
		{name: "Interleaved arm that changes only the load", spec: withOrder("Interleaved", map[string]any{
			"arms": []any{map[string]any{"name": "more", "load": map[string]any{"vus": int64(2)}}}})},
	}
	// The policy takes effect a moment after it is created: wait until the first case warns.
	deadline := time.Now().Add(15 * time.Second)
	for {
		w.take()
		err := c.Create(t.Context(), sweep(tests[0].spec)("order-probe"), client.DryRunAll)
		if err != nil {
			t.Fatalf("an Interleaved sweep was refused, want accepted with a warning: %v", err)
		}
		if got := ofOrderPolicy(w.take()); len(got) > 0 {
			t.Logf("kubectl prints: Warning: %s", got[0])
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no warning for an Interleaved sweep comparing two arms with the baseline within 15s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w.take()
			if err := c.Create(t.Context(), sweep(tt.spec)("order"), client.DryRunAll); err != nil {
				t.Fatalf("refused, want accepted: %v", err)
			}
			got := ofOrderPolicy(w.take())
			if len(tt.warns) == 0 {
				if len(got) > 0 {
					t.Errorf("warned, want no warning: %q", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("got warnings %q, want one from %s", got, orderPolicy)
			}
			for _, want := range tt.warns {
				if !strings.Contains(got[0], want) {
					t.Errorf("the warning does not say %q:\n%s", want, got[0])
				}
			}
		})
	}
	t.Run("an update warns only when the order or the arms change", func(t *testing.T) {
		s := sweep(withOrder("Interleaved", map[string]any{"arms": arms}))("order-update").(*unstructured.Unstructured)
		if err := env.Client.Create(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		w.take()
		s.SetLabels(map[string]string{"team": "a"})
		if err := c.Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		if got := ofOrderPolicy(w.take()); len(got) > 0 {
			t.Errorf("a metadata update warned: %q", got)
		}
		spec := s.Object["spec"].(map[string]any)
		spec["arms"] = arms[:1]
		if err := c.Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		if got := ofOrderPolicy(w.take()); len(got) != 1 || !strings.Contains(got[0], "arm two with the baseline") {
			t.Errorf("changing the arms of an Interleaved sweep: warnings %q, want one naming arm two", got)
		}
		spec["order"] = "Randomized"
		if err := c.Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		if got := ofOrderPolicy(w.take()); len(got) > 0 {
			t.Errorf("switching to Randomized warned: %q", got)
		}
	})
}

// ofOrderPolicy keeps the warnings of the fixed-order policy.
func ofOrderPolicy(all []string) []string {
	var out []string
	for _, w := range all {
		if strings.Contains(w, orderPolicy) {
			out = append(out, w)
		}
	}
	return out
}
