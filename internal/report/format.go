// Cell formatting shared by the report's sections: numbers with units, signed changes, p-values,
// durations, sizes and the dashes and notes that stand for a missing value.

package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// unitPerSecond is the unit of request rates.
const unitPerSecond = "req/s"

func workloadName(w result.WorkloadResult) string {
	tag := ""
	if w.Touched {
		tag = " (changed)"
	}
	return fmt.Sprintf("%s %s/%s%s", strings.ToLower(w.Kind), w.Namespace, w.Name, tag)
}

func labels(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// cell escapes text for a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

func ts(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

func dur(seconds float64) string {
	return (time.Duration(seconds * float64(time.Second))).Round(time.Second).String()
}

// num renders an optional number; absent data is a dash, never a zero.
func num(v *float64, decimals int) string {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', decimals, 64)
}

func signed(v *float64, decimals int) string {
	if v == nil {
		return "-"
	}
	s := num(v, decimals)
	if *v > 0 {
		s = "+" + s
	}
	return s
}

func pval(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'g', 3, 64)
}

func withUnit(v *float64, unit string) string {
	if v == nil {
		return "-"
	}
	s := strconv.FormatFloat(math.Round(*v*1000)/1000, 'f', -1, 64)
	switch unit {
	case "":
		return s
	case "%":
		return s + "%"
	}
	return s + " " + unit
}

func intOr(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func noteOr(v, note string) string {
	if note != "" {
		return note
	}
	return v
}

func mib(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", *v/(1<<20))
}

func signedBytes(v *float64) string {
	if v == nil {
		return "-"
	}
	s := mib(v)
	if *v > 0 {
		s = "+" + s
	}
	return s
}

// isShare is a check's pass rate or a custom Rate's share: percent, compared in points.
func isShare(mc result.MetricComparison) bool {
	return mc.Kind == perfexpv1alpha1.MetricPassRate || mc.Kind == perfexpv1alpha1.MetricPercent
}
