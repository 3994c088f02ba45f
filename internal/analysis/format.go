package analysis

import (
	"math"
	"strconv"

	"github.com/perfexp/perfexp/internal/analysis/result"
)

// format renders a number with up to three decimals and no trailing zeros.
func format(v float64) string {
	if !result.Finite(v) {
		return ""
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}
