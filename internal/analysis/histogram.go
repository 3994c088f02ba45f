package analysis

import (
	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/result"
)

func histogramFromModel(h *model.SampleHistogram) *result.Histogram {
	out := result.NewHistogram()
	if h == nil {
		return out
	}
	out.Count = float64(h.Count)
	out.Sum = float64(h.Sum)
	for _, b := range h.Buckets {
		if b == nil {
			continue
		}
		out.AddBucket(float64(b.Lower), float64(b.Upper), b.Boundaries, float64(b.Count))
	}
	return out
}
