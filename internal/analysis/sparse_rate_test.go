package analysis

import (
	"math"
	"testing"

	"github.com/prometheus/common/model"
)

func TestSparseRate(t *testing.T) {
	// The window is (100 s, 131 s].
	start, end := model.Time(100_000), model.Time(131_000)
	at := func(s int64, v float64) model.SamplePair {
		return model.SamplePair{Timestamp: model.Time(s * 1000), Value: model.SampleValue(v)}
	}
	tests := []struct {
		name    string
		samples []model.SamplePair
		want    float64
		ok      bool
	}{
		{"no sample inside: the counter did not move", []model.SamplePair{at(60, 500), at(145, 500.1)}, 0, true},
		{"a sample at the start counts as before it", []model.SamplePair{at(55, 400), at(100, 500), at(145, 501)}, 0, true},
		{"one inside: from the last before, over the time between", []model.SamplePair{at(20, 0), at(80, 10), at(125, 19)}, 0.2, true},
		{"one inside after a reset: counted from zero", []model.SamplePair{at(80, 5000), at(125, 9)}, 0.2, true},
		{"two inside with a reset between them", []model.SamplePair{at(95, 100), at(110, 107.5), at(125, 7.5)}, 0.5, true},
		{"samples after the end are not used", []model.SamplePair{at(95, 100), at(125, 115), at(140, 1000)}, 0.5, true},
		{"none before the start: a container that started inside", []model.SamplePair{at(110, 3), at(125, 10)}, 0, false},
		{"no samples", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sparseRate(tt.samples, start, end)
			if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("sparseRate = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
