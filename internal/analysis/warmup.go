package analysis

import (
	"context"
	"fmt"

	"github.com/perfexp/perfexp/internal/result"
)

// warmUpScenario is the scenario tag of the warm-up's samples (internal/load's WarmUpName).
const warmUpScenario = "warm-up"

// readWarmUp reads the warm-up's requests, for the finding that sets its latency beside the
// measured window's: its k6 latency histograms, the failed requests apart, summed over its
// runner at the warm-up's end (its pod ended then, so its last samples are within the
// lookback, and k6's histograms start at zero with the pod). One instant query, only when the
// run had a warm-up; nil when it had none or its samples hold no histogram.
func readWarmUp(ctx context.Context, q Querier, in Input) (*result.RequestStats, error) {
	if in.WarmUpEnd.IsZero() {
		return nil, nil
	}
	query := fmt.Sprintf("sum by (%s) (%s{testid=%s,%s=%s})", tagExpectedResponse, metricDuration, quote(in.TestID), tagScenario, quote(warmUpScenario))
	vec, err := vector(ctx, q, query, in.WarmUpEnd)
	if err != nil {
		return nil, err
	}
	a := &agg{hist: result.NewHistogram(), okHist: result.NewHistogram()}
	for _, s := range vec {
		if s.Histogram == nil {
			continue
		}
		h := histogramFromModel(s.Histogram)
		a.series++
		a.reqs += h.Count
		a.hist.Add(h)
		if _, ok := s.Metric[tagExpectedResponse]; ok {
			a.errLabelled = true
		}
		if s.Metric[tagExpectedResponse] == unexpected {
			a.errs += h.Count
		} else {
			a.okHist.Add(h)
		}
	}
	if a.reqs == 0 {
		return nil, nil
	}
	st := a.stats(in.WarmUpEnd.Sub(in.Start).Seconds())
	return &st, nil
}
