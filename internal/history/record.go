// Package history keeps the compact results of comparable runs and finds the change points
// in them (with internal/judge's change-point statistics). It is pure but for read.go, the one
// reader of the histories a comparison learns its between-run noise from: records are built
// from an experiment's status, and the cluster-facing writer lives in controllers/history.go.
package history

import (
	"encoding/json"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// RecordFrom is the compact record of a finished experiment: status.results cut to the bounds
// of a record (perfexpv1alpha1.HistoryMax*), so a PerfHistory of maxRecords records stays
// within etcd's object size. images are the measured workloads' container images.
func RecordFrom(exp *perfexpv1alpha1.PerfExperiment, images []perfexpv1alpha1.HistoryValue, at metav1.Time) perfexpv1alpha1.HistoryRecord {
	rec := perfexpv1alpha1.HistoryRecord{Experiment: exp.Name, UID: exp.UID, Time: at}
	if w := exp.Status.Window; w != nil {
		rec.Window = w.DeepCopy()
	}
	if exp.Spec.Variant != nil {
		rec.Variant = exp.Spec.Variant.Description
	}
	rec.Images = append(rec.Images, images[:min(len(images), perfexpv1alpha1.HistoryMaxImages)]...)
	r := exp.Status.Results
	if r == nil {
		return rec
	}
	rec.Validity = r.Validity
	for _, sc := range r.Scenarios[:min(len(r.Scenarios), perfexpv1alpha1.HistoryMaxScenarios)] {
		hs := perfexpv1alpha1.HistoryScenario{Name: sc.Name, HistoryStats: statsOf(sc.RequestStats)}
		// status keeps the most frequent request names first; the record keeps the first few.
		for _, rq := range sc.TopRequests[:min(len(sc.TopRequests), perfexpv1alpha1.HistoryMaxRequests)] {
			hs.Requests = append(hs.Requests, perfexpv1alpha1.HistoryRequest{Name: rq.Name, HistoryStats: statsOf(rq.RequestStats)})
		}
		rec.Scenarios = append(rec.Scenarios, hs)
	}
	for _, w := range r.Workloads[:min(len(r.Workloads), perfexpv1alpha1.HistoryMaxServices)] {
		rec.Services = append(rec.Services, perfexpv1alpha1.HistoryService{
			Name: w.Kind + "/" + w.Namespace + "/" + w.Name, CPU: w.CPUAvg, Memory: w.MemoryAvg})
	}
	for _, q := range r.Queries {
		if q.Error != "" || q.Value == "" {
			continue
		}
		if len(rec.Queries) == perfexpv1alpha1.HistoryMaxQueries {
			break
		}
		rec.Queries = append(rec.Queries, perfexpv1alpha1.HistoryValue{Name: q.Name, Value: q.Value})
	}
	return rec
}

func statsOf(s perfexpv1alpha1.RequestStats) perfexpv1alpha1.HistoryStats {
	return perfexpv1alpha1.HistoryStats{Count: s.Requests, ErrorPercent: s.ErrorPercent, Avg: s.Avg, P50: s.P50,
		P95: s.P95, P99: s.P99, Rate: s.Rate}
}

// Append adds rec to h unless a record of the same experiment UID is there (writing is
// idempotent: a re-reconcile, or an operator restarted between the write and the status
// update, adds nothing). Records stay ordered by time; the oldest are dropped beyond
// maxRecords. It reports whether h changed.
func Append(h *perfexpv1alpha1.PerfHistory, rec perfexpv1alpha1.HistoryRecord) bool {
	for _, r := range h.Status.Records {
		if r.UID == rec.UID {
			return false
		}
	}
	h.Status.Records = append(h.Status.Records, rec)
	sort.SliceStable(h.Status.Records, func(i, j int) bool {
		return h.Status.Records[i].Time.Before(&h.Status.Records[j].Time)
	})
	DropOldest(h, len(h.Status.Records)-h.MaxRecordsOrDefault())
	return true
}

// DropOldest removes the n oldest records (none when n <= 0), and counts them.
func DropOldest(h *perfexpv1alpha1.PerfHistory, n int) {
	if n <= 0 {
		return
	}
	n = min(n, len(h.Status.Records))
	h.Status.Records = append([]perfexpv1alpha1.HistoryRecord(nil), h.Status.Records[n:]...)
	h.Status.Dropped += int64(n)
}

// Fit drops the oldest records while h's JSON exceeds limit bytes, keeping at least one, so a
// history of unusually large records still fits in etcd. It reports how many it dropped.
func Fit(h *perfexpv1alpha1.PerfHistory, limit int) (int, error) {
	dropped := 0
	for len(h.Status.Records) > 1 {
		b, err := json.Marshal(h)
		if err != nil {
			return dropped, err
		}
		if len(b) <= limit {
			break
		}
		// Drop about as many records as the excess holds, at least one.
		per := len(b) / len(h.Status.Records)
		n := max(1, (len(b)-limit+per-1)/per)
		n = min(n, len(h.Status.Records)-1)
		DropOldest(h, n)
		dropped += n
	}
	return dropped, nil
}
