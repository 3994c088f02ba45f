package promtest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// Story: whichever Prometheus runs the tests (Debian's 2.42 or a 3.x from hack/prometheus3.sh),
// Start gives it the flags its version wants: it takes native histograms by remote write, and
// it warns about no flag (3.9 and later warn about --enable-feature=native-histograms).
func TestStartTakesNativeHistogramsByRemoteWriteWithoutFlagWarnings(t *testing.T) {
	s := Start(t)
	t.Logf("Prometheus %s", s.Version)
	at := time.Now().Add(-time.Minute).Truncate(time.Second)
	h := NewNativeHistogram()
	h.Observe(0.01, 0.02, 0.4)
	s.Write(t, []Series{{Labels: map[string]string{"__name__": "start_probe_seconds"}, Histograms: []HistogramSample{{T: at, H: h.Snapshot()}}}})
	v, _, err := s.API(t).Query(context.Background(), "start_probe_seconds", at)
	if err != nil {
		t.Fatal(err)
	}
	vec, ok := v.(model.Vector)
	if !ok || len(vec) != 1 || vec[0].Histogram == nil || vec[0].Histogram.Count != 3 {
		t.Fatalf("the written histogram (3 observations) read back as %v", v)
	}
	log, err := os.ReadFile(s.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(log)) {
		if strings.Contains(strings.ToLower(line), "level=warn") {
			t.Errorf("Prometheus %s warned: %s", s.Version, line)
		}
	}
}
