// The CPU of a container whose cAdvisor samples are too sparse for a rate over a short window.

package analysis

import (
	"time"

	"github.com/prometheus/common/model"
)

// sparseRates are the CPU rates, per container instance and at each of its fresh steps, of the
// instances in raw (cAdvisor's CPU counters, samples from a lookback before start to end) that
// have no rate over the window in rated: fewer than two of their samples lie inside it. cAdvisor
// stamps a new sample of a container only at its housekeeping, which it spaces out (up to a
// minute and more) while the container's use does not change, so an idle container may have one
// sample inside a 30 s window; its use is still known (about nothing), not missing. (One with
// none inside is not kept by the working-set query, sampledIn, and gets no rate here either.)
func sparseRates(raw, rated model.Matrix, fresh map[string]map[model.Time]bool, start, end time.Time) model.Matrix {
	have := map[string]bool{}
	for _, ss := range rated {
		have[instanceKey(ss.Metric)] = true
	}
	lo, hi := model.TimeFromUnixNano(start.UnixNano()), model.TimeFromUnixNano(end.UnixNano())
	sums := map[string]float64{}
	var order []string
	labels := map[string]model.Metric{}
	for _, ss := range raw {
		k := instanceKey(ss.Metric)
		if have[k] {
			continue
		}
		v, ok := sparseRate(ss.Values, lo, hi)
		if !ok {
			continue
		}
		if _, seen := sums[k]; !seen {
			order = append(order, k)
			labels[k] = model.Metric{"namespace": ss.Metric["namespace"], "pod": ss.Metric["pod"], "container": ss.Metric["container"], "id": ss.Metric["id"]}
		}
		sums[k] += v
	}
	out := make(model.Matrix, 0, len(order))
	for _, k := range order {
		ss := &model.SampleStream{Metric: labels[k]}
		for ts := range fresh[k] {
			ss.Values = append(ss.Values, model.SamplePair{Timestamp: ts, Value: model.SampleValue(sums[k])})
		}
		out = append(out, ss)
	}
	return out
}

// sparseRate is a counter's increase per second around the window (start, end], from its
// samples in time order: from the last sample at or before start to the last at or before end,
// over the time between the two (the span that holds the window's use, as exactly as the
// samples allow), counting a drop as a reset to zero as rate() does. With no sample inside the
// window the counter did not move while it was sampled: 0. ok is false without a sample at or
// before start (a container that started during the window, whose single sample cannot tell
// when its use began).
func sparseRate(samples []model.SamplePair, start, end model.Time) (rate float64, ok bool) {
	from, last := -1, -1
	for i, p := range samples {
		if p.Timestamp <= start {
			from = i
		}
		if p.Timestamp <= end {
			last = i
		}
	}
	if from < 0 {
		return 0, false
	}
	if last == from {
		return 0, true
	}
	var inc float64
	for i := from + 1; i <= last; i++ {
		d := float64(samples[i].Value - samples[i-1].Value)
		if d < 0 {
			d = float64(samples[i].Value)
		}
		inc += d
	}
	return inc / samples[last].Timestamp.Sub(samples[from].Timestamp).Seconds(), true
}
