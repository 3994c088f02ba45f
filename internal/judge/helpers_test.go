package judge

import (
	"github.com/perfexp/perfexp/internal/result"
)

const mib = 1 << 20

func ptr(v float64) *float64 { return &v }

func deref[T any](p *T) any {
	if p == nil {
		return "absent"
	}
	return *p
}

func labels(c *result.Comparison) []string {
	var out []string
	for _, mc := range c.Metrics {
		out = append(out, mc.Metric)
	}
	return out
}
