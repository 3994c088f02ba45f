package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sweepFixture(t *testing.T) *SweepResult {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sweep.results.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseSweepJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSweepHTMLCharts(t *testing.T) {
	noLoad := sweepSample()
	noLoad.LoadParameter = ""
	tests := []struct {
		name      string
		r         *SweepResult
		charts    int
		forest    int // arms compared with the baseline, one row each (one scenario)
		bars      int // every arm's p95
		capacity  int // points per capacity chart
		headline  string
		mentioned []string
	}{
		{"a sweep over load", sweepSample(), 4, 2, 3, 3, "users-1", []string{"p95 against vus", "throughput against vus", "(no interval)"}},
		{"a sweep not over load", noLoad, 2, 2, 3, 0, "users-1", nil},
		{"the real A/A sweep", sweepFixture(t), 2, 5, 6, 0, "None", []string{"4 Inconclusive", "1 Regressed", "+5320.3 % [+2467.5, +12163.9]", "Baseline p95: checkinout 90.685 ms"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page, err := SweepHTML(tc.r)
			if err != nil {
				t.Fatal(err)
			}
			selfContained(t, page)
			cs := charts(t, page)
			if len(cs) != tc.charts {
				t.Errorf("%d charts, want %d", len(cs), tc.charts)
			}
			if got := marks(cs["p95 change of each arm with its 95% interval"], "forest-row"); got != tc.forest {
				t.Errorf("%d arms in the forest plot, want %d", got, tc.forest)
			}
			if got := marks(cs["p95 per arm"], "arm-bar"); got != tc.bars {
				t.Errorf("%d bars, want %d", got, tc.bars)
			}
			if tc.capacity > 0 {
				for _, c := range []string{"p95 against vus", "throughput against vus"} {
					if got := marks(cs[c], "capacity-point"); got != tc.capacity {
						t.Errorf("%s: %d points, want %d", c, got, tc.capacity)
					}
				}
			}
			head, svg := strings.Index(page, `id="headline"`), strings.Index(page, "<svg")
			if head < 0 || head > svg {
				t.Errorf("the best arm (at %d) must come before the first chart (at %d)", head, svg)
			}
			if h := page[head:]; !strings.Contains(h[:strings.Index(h, "</div>")], tc.headline) {
				t.Errorf("headline lacks %q", tc.headline)
			}
			for _, want := range append(tc.mentioned, "<table>") {
				if !strings.Contains(page, want) {
					t.Errorf("the page lacks %q", want)
				}
			}
		})
	}
}

func TestSweepHTMLWithoutComparisons(t *testing.T) {
	onlyBaseline := sweepSample()
	onlyBaseline.Arms, onlyBaseline.BestArm, onlyBaseline.LoadParameter = onlyBaseline.Arms[:1], "", ""
	tests := []struct {
		name string
		r    *SweepResult
		says string
	}{
		{"only a baseline", onlyBaseline, "No arm has a p95 change to draw"},
		{"nothing at all", &SweepResult{}, "No arm has a p95: no run of the sweep succeeded."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page, err := SweepHTML(tc.r)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(page, tc.says) {
				t.Errorf("the page does not say %q", tc.says)
			}
			charts(t, page)
			selfContained(t, page)
		})
	}
}

// In a sweep over variants and loads an arm may be compared with the baseline of its own load,
// not with the sweep's baseline: its row says which.
func TestSweepHTMLNamesAnArmsOwnBaseline(t *testing.T) {
	r := sweepSample()
	r.Arms[1].Baseline = "baseline-vus-20"
	page, err := SweepHTML(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, "<title>users-20 (vus = 20) vs baseline-vus-20:") || strings.Contains(page, "users-1 (vus = 1) vs") {
		t.Error("the arm compared with its own load's baseline is not named so, or another arm is")
	}
}
