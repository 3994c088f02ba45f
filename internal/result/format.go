package result

import (
	"fmt"
	"strings"
)

// OrZero is *p, or 0 when p is nil.
func OrZero(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// ShortList joins the first n names and says how many more there are.
func ShortList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
