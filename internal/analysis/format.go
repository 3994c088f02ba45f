package analysis

import (
	"math"
	"strconv"
)

// format renders a number with up to three decimals and no trailing zeros.
func format(v float64) string {
	if !finite(v) {
		return ""
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

// finite reports whether v is a usable number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// num returns a pointer to v, or nil when v is NaN or infinite, so NaN never leaks.
func num(v float64) *float64 {
	if !finite(v) {
		return nil
	}
	return &v
}

func count(v int64) *int64 { return &v }
