package analysis

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/result"
)

// metricIterationDuration is k6's iteration_duration as a native histogram, in seconds: one
// sample per iteration, with the iteration counter's tags. Its twin k6_iterations_total (same
// labels) says which histograms went quiet before an edge, as the request counter does for
// request latencies (edges.go), so it is read in the same bounded number of queries.
const metricIterationDuration = "k6_iteration_duration_seconds"

// iterationData holds each iteration-duration histogram at each edge, by series key.
type iterationData struct {
	hists  []map[string]*result.Histogram
	labels map[string]model.Metric
	// skipped says why the durations are left out (a reset runner: its histograms would need
	// reading sample by sample, which only the request histograms are).
	skipped string
}

// readIterationDurations reads the iteration-duration histograms at the edges; k6 must hold
// the iteration counters read at the same edges.
func readIterationDurations(ctx context.Context, q Querier, testID string, from time.Time, edges []time.Time, k6 *k6Data) (*iterationData, error) {
	if k6.resets > 0 {
		return &iterationData{skipped: "iteration durations are left out: a k6 runner restarted mid-run"}, nil
	}
	labels := map[string]model.Metric{}
	h, err := histogramsAt(ctx, q, metricIterationDuration+"{testid="+quote(testID)+"}", from, edges, labels, k6.iters, k6.iterLabels)
	if err != nil {
		return nil, err
	}
	return &iterationData{hists: h, labels: labels}, nil
}

// fill sets every scenario's iteration duration between edges a and b (milliseconds).
func (d *iterationData) fill(a, b int, scenarios []result.ScenarioResult) []string {
	if d == nil || d.skipped != "" {
		return nil
	}
	per := map[string]*result.Histogram{}
	for k, hb := range d.hists[b] {
		s := string(d.labels[k][tagScenario])
		h := hb.Clone()
		h.Sub(d.hists[a][k])
		if per[s] == nil {
			per[s] = result.NewHistogram()
		}
		per[s].Add(h)
	}
	var notes []string
	for i := range scenarios {
		sr := &scenarios[i]
		sr.IterationDuration = nil
		h := per[sr.Name]
		if h == nil || math.Round(h.Count) <= 0 {
			continue
		}
		if !h.Consistent() {
			notes = append(notes, fmt.Sprintf("scenario %s: the iteration-duration histogram decreased; a counter reset went unnoticed", sr.Name))
		}
		sr.IterationDuration = distribution(h, 1000)
	}
	return notes
}

// notes are the caveats of the read.
func (d *iterationData) notes() []string {
	if d == nil || d.skipped == "" {
		return nil
	}
	return []string{d.skipped}
}
