package result

import (
	"fmt"
	"strings"
)

func OrZero(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func ShortList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
