package analysis

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// quote renders a PromQL string literal. PromQL strings take Go's escape sequences, and
// Prometheus itself prints label matchers with strconv.Quote, so this is the escaping its own
// parser reads back.
func quote(s string) string { return strconv.Quote(s) }

// anyOf renders a regular expression matching exactly one of values. Prometheus anchors label
// regexes, so no ^ and $ are needed.
func anyOf(values []string) string {
	vs := append([]string(nil), values...)
	sort.Strings(vs)
	parts := make([]string, 0, len(vs))
	for i, v := range vs {
		if i > 0 && v == vs[i-1] {
			continue
		}
		parts = append(parts, regexp.QuoteMeta(v))
	}
	return strings.Join(parts, "|")
}

// promDuration renders a duration as a PromQL range in whole seconds, rounded up so a range
// never falls short of what it must cover.
func promDuration(d time.Duration) string {
	s := int64(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return fmt.Sprintf("%ds", s)
}
