package analysis

import (
	"math"
	"regexp"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func TestHistogramFromModelKeepsBounds(t *testing.T) {
	h := histogramFromModel(&model.SampleHistogram{Count: 3, Sum: 0.3, Buckets: model.HistogramBuckets{
		{Boundaries: 0, Lower: 0.0001220703125, Upper: 0.00013311861971011446, Count: 3},
	}})
	if g := h.BucketGrowth(); math.Abs(g-math.Pow(2, 1.0/8)) > 1e-12 {
		t.Errorf("bucket growth %g, want 2^(1/8)", g)
	}
}

func TestPodPattern(t *testing.T) {
	tests := []struct {
		kind perfexpv1alpha1.WorkloadKind
		name string
		pod  string
		want bool
	}{
		{perfexpv1alpha1.WorkloadKindDeployment, "api", "api-7d9f8c6b5-abcde", true},
		{perfexpv1alpha1.WorkloadKindDeployment, "api", "api-v2-7d9f8c6b5-abcde", false},
		{perfexpv1alpha1.WorkloadKindDeployment, "api", "api-0", false},
		{perfexpv1alpha1.WorkloadKindDeployment, "my.app", "myxapp-7d9f8c6b5-abcde", false},
		{perfexpv1alpha1.WorkloadKindStatefulSet, "db", "db-0", true},
		{perfexpv1alpha1.WorkloadKindStatefulSet, "db", "db-12", true},
		{perfexpv1alpha1.WorkloadKindStatefulSet, "db", "db-backup-0", false},
		{perfexpv1alpha1.WorkloadKindStatefulSet, "kafka", "kafka-7d9f8-abcde", false},
	}
	for _, tc := range tests {
		t.Run(string(tc.kind)+" "+tc.name+" "+tc.pod, func(t *testing.T) {
			re := regexp.MustCompile("^(?:" + PodPattern(tc.kind, tc.name) + ")$")
			if got := re.MatchString(tc.pod); got != tc.want {
				t.Errorf("match = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestQuoteEscapesLabelValues(t *testing.T) {
	tests := []struct{ in, want string }{
		{`plain`, `"plain"`},
		{`a"b`, `"a\"b"`},
		{`back\slash`, `"back\\slash"`},
		{"new\nline", `"new\nline"`},
	}
	for _, tc := range tests {
		if got := quote(tc.in); got != tc.want {
			t.Errorf("quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := anyOf([]string{"b.c", "a", "a"}); got != `a|b\.c` {
		t.Errorf("anyOf = %s", got)
	}
}

func TestResolveSlices(t *testing.T) {
	ms := time.Unix(1_700_000_000, 0)
	end := ms.Add(14 * time.Hour)
	d := func(x time.Duration) *metav1.Duration { return &metav1.Duration{Duration: x} }
	tests := []struct {
		name       string
		s          perfexpv1alpha1.TimeSlice
		start, end time.Time
		cut        string
	}{
		{"first 2h", perfexpv1alpha1.TimeSlice{To: d(2 * time.Hour)}, ms, ms.Add(2 * time.Hour), ""},
		{"last 12h", perfexpv1alpha1.TimeSlice{Last: d(12 * time.Hour)}, end.Add(-12 * time.Hour), end, ""},
		{"from 1h to the end", perfexpv1alpha1.TimeSlice{From: d(time.Hour)}, ms.Add(time.Hour), end, ""},
		{"clamped to the window", perfexpv1alpha1.TimeSlice{From: d(13 * time.Hour), To: d(20 * time.Hour)}, ms.Add(13 * time.Hour), end,
			"asked for 13h0m0s to 20h0m0s of the measured window, which lasted 14h0m0s: it covers 13h0m0s to 14h0m0s"},
		{"the last 24h of 14h", perfexpv1alpha1.TimeSlice{Last: d(24 * time.Hour)}, ms, end,
			"asked for -10h0m0s to 14h0m0s of the measured window, which lasted 14h0m0s: it covers 0s to 14h0m0s"},
		{"beyond the window is empty", perfexpv1alpha1.TimeSlice{From: d(20 * time.Hour)}, ms.Add(20 * time.Hour), ms.Add(20 * time.Hour),
			"starts at 20h0m0s of the measured window, which lasted 14h0m0s: it is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := resolveSlices([]perfexpv1alpha1.TimeSlice{tc.s}, ms, end)[0]
			if !got.start.Equal(tc.start) || !got.end.Equal(tc.end) {
				t.Errorf("slice = %s..%s, want %s..%s", got.start, got.end, tc.start, tc.end)
			}
			if got.cut != tc.cut {
				t.Errorf("cut = %q, want %q", got.cut, tc.cut)
			}
		})
	}
}
