package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/testenv"
)

// Story: after eight runs of check-out, the fifth onwards on a slower release, an engineer
// looks at the trend, sees the change at the fifth run, and confirms it.
func TestHistoryCommand(t *testing.T) {
	env := testenv.Start(t)
	ns := env.Namespace(t, "history-cli")
	conn := &connection{client: env.Client, namespace: ns}
	ctx := t.Context()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

	h := &perfexpv1alpha1.PerfHistory{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "checkout-trend"}}
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	p95s := []float64{101, 99, 102, 100, 161, 158, 160, 163}
	for i, p := range p95s {
		n := int64(6000)
		v := strconv.FormatFloat(p, 'f', 1, 64)
		h.Status.Records = append(h.Status.Records, perfexpv1alpha1.HistoryRecord{
			Experiment: fmt.Sprintf("checkout-%d", i+1), UID: types.UID(fmt.Sprintf("uid-%d", i+1)),
			Time: metav1.NewTime(t0.Add(time.Duration(i) * time.Hour)), Validity: perfexpv1alpha1.Valid,
			Scenarios: []perfexpv1alpha1.HistoryScenario{{Name: "checkout",
				HistoryStats: perfexpv1alpha1.HistoryStats{Count: &n, P95: v, Avg: v, Rate: "100", ErrorPercent: "0"},
				Requests:     []perfexpv1alpha1.HistoryRequest{{Name: "POST /checkout-by-barcode", HistoryStats: perfexpv1alpha1.HistoryStats{P95: v}}}}},
		})
	}
	if err := env.Client.Status().Update(ctx, h); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		args    []string
		want    []string
		notWant []string
	}{
		{name: "the namespace's histories", args: []string{"history"},
			want: []string{"HISTORY", "checkout-trend", "8", "checkout-1", "checkout-8"}},
		{name: "the p95 trend by experiment", args: []string{"history", "--experiment", "checkout-3"},
			want: []string{"History " + ns + "/checkout-trend: 8 runs", "CHECKOUT/P95 (ms)", "161 ▲+60%", "trend", "▁▁▁▁█▇██",
				"Change points", "checkout-5  checkout/p95", "Regressed"},
			notWant: []string{"POST /checkout-by-barcode  "}},
		{name: "request names too", args: []string{"history", "--key", "checkout-trend", "--requests"},
			want: []string{"CHECKOUT/POST /CHECKOUT-BY-BARCODE/P95 (ms)"}},
		{name: "one series by name", args: []string{"history", "--key", "checkout-trend", "--metric", "checkout/avg"},
			want: []string{"CHECKOUT/AVG (ms)"}, notWant: []string{"CHECKOUT/P95 (ms)"}},
		{name: "a metric that is not there", args: []string{"history", "--key", "checkout-trend", "--metric", "cpu"},
			want: []string{`No series "cpu"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, conn, tc.args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}

	t.Run("ack", func(t *testing.T) {
		if _, err := run(t, conn, "history", "ack", "checkout-5", "--confirm", "--dismiss"); err == nil {
			t.Error("--confirm with --dismiss was accepted")
		}
		if _, err := run(t, conn, "history", "ack", "checkout-99", "--confirm"); err == nil {
			t.Error("an ack for a run in no history was accepted")
		}
		out, err := run(t, conn, "history", "ack", "checkout-5", "--confirm", "--note", "release 2.4")
		if err != nil || !strings.Contains(out, "is confirmed") {
			t.Fatalf("ack --confirm: %v %s", err, out)
		}
		got := &perfexpv1alpha1.PerfHistory{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "checkout-trend"}, got); err != nil {
			t.Fatal(err)
		}
		if len(got.Spec.Acks) != 1 || got.Spec.Acks[0].UID != "uid-5" || got.Spec.Acks[0].Note != "release 2.4" {
			t.Fatalf("acks %+v", got.Spec.Acks)
		}
		out, _ = run(t, conn, "history", "--key", "checkout-trend")
		if !strings.Contains(out, "▲+60%*") || !strings.Contains(out, "Regressed (confirmed)") || strings.Contains(out, "checkout/rate") {
			t.Errorf("confirmed change not marked:\n%s", out)
		}
		// Dismissing replaces the decision; the change is no longer listed.
		if _, err := run(t, conn, "history", "ack", "checkout-5", "--dismiss"); err != nil {
			t.Fatal(err)
		}
		out, _ = run(t, conn, "history", "--key", "checkout-trend")
		if !strings.Contains(out, "No change points.") {
			t.Errorf("dismissed change still listed:\n%s", out)
		}
		if _, err := run(t, conn, "history", "ack", "checkout-5", "--clear"); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "checkout-trend"}, got); err != nil || len(got.Spec.Acks) != 0 {
			t.Errorf("acks after --clear: %+v %v", got.Spec.Acks, err)
		}
	})
}
