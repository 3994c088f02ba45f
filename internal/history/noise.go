package history

import (
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge"
)

// logScaleMetrics are the series whose run-to-run spread a single-run comparison can use: the
// ones it compares as ratios. Error rates (points) and custom queries (no interval) are not.
var logScaleMetrics = map[string]bool{"avg": true, "p50": true, "p95": true, "p99": true, "rate": true, "cpu": true, "memory": true}

// BetweenRunNoise estimates the between-run noise of every log-scale series of the histories
// from the runs of its latest segment (after its last change point, Changes: confirmed changes
// start a segment, dismissed ones do not) that are no older than set.MaxAge at now. A series
// needs set.MinRuns such runs in a history; several histories (the baseline's configuration and
// the variant's) are pooled, each segment's sum of squares and degrees of freedom added. It
// returns nil when no series has an estimate.
func BetweenRunNoise(hs []*perfexpv1alpha1.PerfHistory, now time.Time, set judge.HistoryNoiseSettings) *judge.HistoryNoise {
	set = set.WithDefaults()
	out := &judge.HistoryNoise{Series: map[string]judge.SegmentNoise{}, Now: now, Settings: set}
	for _, h := range hs {
		if h == nil || len(h.Status.Records) == 0 {
			continue
		}
		recs := h.Status.Records
		starts := map[string]int{}
		for _, c := range Changes(h) {
			// Changes are ordered by record: the last one of a series starts its latest segment.
			starts[c.Series] = c.Record
		}
		used := false
		for _, s := range SeriesOf(recs) {
			if !logScaleMetrics[s.Metric] {
				continue
			}
			var values []float64
			var oldest, newest time.Time
			for j, ri := range s.Records {
				t := recs[ri].Time.Time
				if ri < starts[s.Key] || now.Sub(t) > set.MaxAge {
					continue
				}
				values = append(values, s.Values[j])
				if oldest.IsZero() || t.Before(oldest) {
					oldest = t
				}
				if t.After(newest) {
					newest = t
				}
			}
			if len(values) < set.MinRuns {
				continue
			}
			ss, df, ok := judge.SegmentVariance(values)
			if !ok || ss <= 0 {
				continue
			}
			sn := out.Series[s.Key]
			sn.SS += ss
			sn.DF += df
			if sn.Oldest.IsZero() || oldest.Before(sn.Oldest) {
				sn.Oldest = oldest
			}
			if newest.After(sn.Newest) {
				sn.Newest = newest
			}
			out.Series[s.Key] = sn
			used = true
		}
		if used {
			out.Histories = append(out.Histories, h.Name)
		}
	}
	if len(out.Series) == 0 {
		return nil
	}
	return out
}
