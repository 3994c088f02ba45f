package history

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	judgehistory "github.com/perfexp/perfexp/internal/judge/history"
	"github.com/perfexp/perfexp/internal/testexp"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func i64(v int64) *int64 { return &v }

// record is a run whose checkout scenario has the given p95 and avg; the rest stays flat.
func record(i int, p95 float64) perfexpv1alpha1.HistoryRecord {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	return perfexpv1alpha1.HistoryRecord{
		Experiment: fmt.Sprintf("run-%d", i+1), UID: types.UID(fmt.Sprintf("uid-%d", i+1)),
		Time: metav1.NewTime(t0.Add(time.Duration(i) * time.Hour)), Validity: perfexpv1alpha1.Valid,
		Scenarios: []perfexpv1alpha1.HistoryScenario{{Name: "checkout",
			HistoryStats: perfexpv1alpha1.HistoryStats{Count: i64(6000), P95: f(p95), Avg: f(p95 / 2), ErrorPercent: "0", Rate: "100"}}},
	}
}

// history of n runs with a step by factor from run step (0-based) onwards.
func history(n, step int, factor float64, seed uint64) *perfexpv1alpha1.PerfHistory {
	rng := rand.New(rand.NewPCG(seed, seed))
	h := &perfexpv1alpha1.PerfHistory{}
	for i := range n {
		level := 100.0
		if i >= step {
			level *= factor
		}
		h.Status.Records = append(h.Status.Records, record(i, level*(1+0.02*rng.NormFloat64())))
	}
	return h
}

func changed(cs []Change) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s@%s", c.Series, c.Experiment))
	}
	return out
}

func TestChangesAcks(t *testing.T) {
	tests := []struct {
		name string
		acks []perfexpv1alpha1.HistoryAck
		want []string
	}{
		{name: "no acks: the step is found on p95 and avg", want: []string{"checkout/avg@run-9", "checkout/p95@run-9"}},
		{name: "dismissed for every metric", acks: []perfexpv1alpha1.HistoryAck{{Experiment: "run-9", Decision: perfexpv1alpha1.AckDismissed}},
			want: []string{}},
		{name: "dismissed for p95 only", acks: []perfexpv1alpha1.HistoryAck{{Experiment: "run-9", Metric: "checkout/p95", Decision: perfexpv1alpha1.AckDismissed}},
			want: []string{"checkout/avg@run-9"}},
		{name: "dismissed for another run of the same name", acks: []perfexpv1alpha1.HistoryAck{{Experiment: "run-9", UID: "other", Decision: perfexpv1alpha1.AckDismissed}},
			want: []string{"checkout/avg@run-9", "checkout/p95@run-9"}},
		{name: "confirmed elsewhere starts a segment there", acks: []perfexpv1alpha1.HistoryAck{{Experiment: "run-4", Metric: "checkout/p95", Decision: perfexpv1alpha1.AckConfirmed}},
			want: []string{"checkout/p95@run-4", "checkout/avg@run-9", "checkout/p95@run-9"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := history(16, 8, 1.2, 1)
			h.Spec.Acks = tc.acks
			got := Changes(h)
			if g := changed(got); strings.Join(g, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("Changes = %v, want %v", g, tc.want)
			}
			for _, c := range got {
				if c.Experiment == "run-9" && (c.Verdict != perfexpv1alpha1.ChangeRegressed || c.Change < 0.1) {
					t.Errorf("%s: verdict %s change %.2f, want Regressed about +0.20", c.Series, c.Verdict, c.Change)
				}
				if c.Confirmed != (c.Experiment == "run-4") {
					t.Errorf("%s@%s: confirmed %v", c.Series, c.Experiment, c.Confirmed)
				}
			}
		})
	}
}

func TestChangesSkipInvalidRuns(t *testing.T) {
	h := history(12, 99, 1, 2)
	// An invalid run with absurd numbers in the middle is no change.
	bad := record(5, 900)
	bad.Validity = perfexpv1alpha1.Invalid
	h.Status.Records[5] = bad
	if got := Changes(h); len(got) != 0 {
		t.Errorf("Changes = %v, want none", changed(got))
	}
}

func TestSettingsOf(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	tests := []struct {
		name string
		spec perfexpv1alpha1.PerfHistorySpec
		want judgehistory.ChangePointSettings
	}{
		{name: "defaults", want: judgehistory.ChangePointSettings{MaxPValue: 0.05, MinMagnitude: 0.05, MinSegment: 3}},
		{name: "set", spec: perfexpv1alpha1.PerfHistorySpec{MinMagnitudePercent: q("10"), MaxPValue: q("0.01")},
			want: judgehistory.ChangePointSettings{MaxPValue: 0.01, MinMagnitude: 0.10, MinSegment: 3}},
		{name: "zero floor means none", spec: perfexpv1alpha1.PerfHistorySpec{MinMagnitudePercent: q("0")},
			want: judgehistory.ChangePointSettings{MaxPValue: 0.05, MinMagnitude: -1, MinSegment: 3}},
		{name: "p-value out of range keeps the default", spec: perfexpv1alpha1.PerfHistorySpec{MaxPValue: q("2")},
			want: judgehistory.ChangePointSettings{MaxPValue: 0.05, MinMagnitude: 0.05, MinSegment: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SettingsOf(tc.spec); got != tc.want {
				t.Errorf("SettingsOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestAppendIdempotentAndBounded(t *testing.T) {
	h := &perfexpv1alpha1.PerfHistory{Spec: perfexpv1alpha1.PerfHistorySpec{MaxRecords: 3}}
	for i := range 5 {
		if !Append(h, record(i, 100)) {
			t.Fatalf("Append(run-%d) = false", i+1)
		}
		if Append(h, record(i, 100)) {
			t.Fatalf("Append(run-%d) twice = true", i+1)
		}
	}
	var names []string
	for _, r := range h.Status.Records {
		names = append(names, r.Experiment)
	}
	if strings.Join(names, ",") != "run-3,run-4,run-5" || h.Status.Dropped != 2 {
		t.Errorf("records %v dropped %d, want run-3,run-4,run-5 and 2", names, h.Status.Dropped)
	}
	// A record that arrives late (an experiment whose analysis took longer) goes in its place.
	late := record(3, 100)
	late.UID, late.Experiment = "late", "late"
	late.Time = metav1.NewTime(late.Time.Add(30 * time.Minute))
	Append(h, late)
	names = nil
	for _, r := range h.Status.Records {
		names = append(names, r.Experiment)
	}
	if strings.Join(names, ",") != "run-4,late,run-5" {
		t.Errorf("records %v, want run-4,late,run-5", names)
	}
}

// fullExperiment has every part of the results at the bounds of a record and beyond.
func fullExperiment() *perfexpv1alpha1.PerfExperiment {
	stats := perfexpv1alpha1.RequestStats{Requests: i64(1234567), Errors: i64(12), Rate: "1234.567", ErrorPercent: "0.001",
		Avg: "123.456", P50: "100.123", P75: "150.5", P90: "200.25", P95: "250.125", P99: "999.999", Max: "5000.1"}
	r := &perfexpv1alpha1.Results{Validity: perfexpv1alpha1.Valid}
	for s := range 10 {
		sc := perfexpv1alpha1.ScenarioResult{Name: fmt.Sprintf("scenario-with-a-long-name-%02d", s), RequestStats: stats}
		for q := range 10 {
			sc.TopRequests = append(sc.TopRequests, perfexpv1alpha1.RequestResult{
				Name: fmt.Sprintf("GET /circulation/loans/{id}/with/a/longish/path/%02d", q), RequestStats: stats})
		}
		r.Scenarios = append(r.Scenarios, sc)
	}
	for w := range 20 {
		r.Workloads = append(r.Workloads, perfexpv1alpha1.WorkloadResult{Kind: "Deployment", Namespace: "folio-perf",
			Name: fmt.Sprintf("mod-circulation-storage-%02d", w), CPUAvg: "1.2345", MemoryAvg: "1234567890"})
	}
	for q := range 20 {
		r.Queries = append(r.Queries, perfexpv1alpha1.QueryResult{Name: fmt.Sprintf("db-connections-%02d", q), Value: "123.456"})
	}
	exp := testexp.New("", "checkout-release-2026-11-baseline-run-01", testexp.WithScenarios(),
		testexp.WithUID("0b6f8d9e-3c1a-4a5e-9d7b-2f1e0c9a8b7c"),
		testexp.WithVariant(&perfexpv1alpha1.Variant{Description: strings.Repeat("x", 256)}))
	exp.Status.Results = r
	now := metav1.NewTime(t0)
	exp.Status.Window = &perfexpv1alpha1.Window{Start: &now, End: &now, WarmUpEnd: &now}
	return exp
}

func TestRecordFromBoundsAndSize(t *testing.T) {
	var images []perfexpv1alpha1.HistoryValue
	for i := range 20 {
		images = append(images, perfexpv1alpha1.HistoryValue{Name: fmt.Sprintf("Deployment/mod-circulation-storage-%02d/app", i),
			Value: "registry.example.com/folio-org/mod-circulation-storage:17.3.0-SNAPSHOT.1234"})
	}
	rec := RecordFrom(fullExperiment(), images, metav1.NewTime(t0))
	if len(rec.Scenarios) != perfexpv1alpha1.HistoryMaxScenarios || len(rec.Scenarios[0].Requests) != perfexpv1alpha1.HistoryMaxRequests ||
		len(rec.Services) != perfexpv1alpha1.HistoryMaxServices || len(rec.Queries) != perfexpv1alpha1.HistoryMaxQueries ||
		len(rec.Images) != perfexpv1alpha1.HistoryMaxImages {
		t.Fatalf("record not cut to its bounds: %d scenarios, %d requests, %d services, %d queries, %d images",
			len(rec.Scenarios), len(rec.Scenarios[0].Requests), len(rec.Services), len(rec.Queries), len(rec.Images))
	}
	if rec.Scenarios[0].P95 != "250.125" || *rec.Scenarios[0].Count != 1234567 || rec.Services[0].CPU != "1.2345" {
		t.Errorf("values not carried over: %+v", rec.Scenarios[0].HistoryStats)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	// The default bound of 100 records of the largest kind must fit etcd's 1.5 MiB.
	const etcdLimit = 3 << 19
	t.Logf("a record at every bound takes %d bytes of JSON; %d of them take %d (etcd's limit: %d)", len(b),
		perfexpv1alpha1.DefaultHistoryMaxRecords, len(b)*perfexpv1alpha1.DefaultHistoryMaxRecords, etcdLimit)
	if len(b)*perfexpv1alpha1.DefaultHistoryMaxRecords > etcdLimit {
		t.Errorf("%d records of %d bytes exceed %d", perfexpv1alpha1.DefaultHistoryMaxRecords, len(b), etcdLimit)
	}

	// Fit keeps the object under HistoryMaxBytes by dropping the oldest.
	h := &perfexpv1alpha1.PerfHistory{}
	for i := range perfexpv1alpha1.DefaultHistoryMaxRecords {
		r := rec
		r.UID, r.Time = types.UID(strconv.Itoa(i)), metav1.NewTime(t0.Add(time.Duration(i)*time.Minute))
		Append(h, r)
	}
	n, err := Fit(h, perfexpv1alpha1.HistoryMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(h)
	t.Logf("Fit dropped %d of %d records at every bound; %d records, %d bytes remain", n,
		perfexpv1alpha1.DefaultHistoryMaxRecords, len(h.Status.Records), len(out))
	if len(out) > perfexpv1alpha1.HistoryMaxBytes || h.Status.Records[len(h.Status.Records)-1].UID != "99" {
		t.Errorf("after Fit: %d bytes, newest %s", len(out), h.Status.Records[len(h.Status.Records)-1].UID)
	}
}

func TestKey(t *testing.T) {
	base := func() *perfexpv1alpha1.PerfExperiment {
		e := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "perf"}}
		vus := int32(10)
		e.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "checkout", VUs: &vus,
			Duration: &metav1.Duration{Duration: time.Minute}, Script: perfexpv1alpha1.ScriptSource{Inline: "export default function() {}"}}}
		return e
	}
	name0, fp0 := Key(base(), nil)
	if !strings.HasPrefix(name0, "runs-") || len(name0) != 21 || len(fp0) != 64 {
		t.Fatalf("Key = %q %q", name0, fp0)
	}
	tests := []struct {
		name  string
		edit  func(*perfexpv1alpha1.PerfExperiment)
		same  bool
		named string
	}{
		{name: "another name, same run", edit: func(e *perfexpv1alpha1.PerfExperiment) { e.Name = "b" }, same: true},
		{name: "variant description reworded", edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Variant = &perfexpv1alpha1.Variant{Description: "x"}
		}, same: true},
		{name: "another target namespace", edit: func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.TargetNamespace = "other" }},
		{name: "another script", edit: func(e *perfexpv1alpha1.PerfExperiment) { e.Spec.Load.Scenarios[0].Script.Inline += " " }},
		{name: "more virtual users", edit: func(e *perfexpv1alpha1.PerfExperiment) { v := int32(20); e.Spec.Load.Scenarios[0].VUs = &v }},
		{name: "another variant", edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.Variant = &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{Image: "app:2"}}}
		}},
		{name: "historyKey wins", edit: func(e *perfexpv1alpha1.PerfExperiment) {
			e.Spec.TargetNamespace = "other"
			e.Spec.Analysis = &perfexpv1alpha1.Analysis{HistoryKey: "checkout-trend"}
		}, named: "checkout-trend"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := base()
			tc.edit(e)
			name, fp := Key(e, nil)
			switch {
			case tc.named != "":
				if name != tc.named || fp != "historyKey:"+tc.named {
					t.Errorf("Key = %q %q, want %q", name, fp, tc.named)
				}
			case tc.same != (fp == fp0):
				t.Errorf("same fingerprint = %v, want %v", fp == fp0, tc.same)
			}
		})
	}
}
