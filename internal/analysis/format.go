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
