package report

import (
	"strings"
	"testing"
)

func TestSparkline(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want string
	}{
		{name: "empty", want: ""},
		{name: "flat is drawn at the middle", xs: []float64{3, 3, 3}, want: "▅▅▅"},
		{name: "lowest to highest", xs: []float64{0, 7, 1, 2, 3, 4, 5, 6}, want: "▁█▂▃▄▅▆▇"},
		{name: "a step", xs: []float64{100, 101, 99, 160, 158}, want: "▁▁▁██"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sparkline(tc.xs); got != tc.want {
				t.Errorf("Sparkline(%v) = %q, want %q", tc.xs, got, tc.want)
			}
		})
	}
}

func TestWithHistory(t *testing.T) {
	const section = "## History\n\nRun 2 of 2.\n"
	tests := []struct {
		name, md, want string
	}{
		{name: "appended", md: "# r\n\n## Method\n\nk6.\n", want: "# r\n\n## Method\n\nk6.\n\n## History\n\nRun 2 of 2.\n"},
		{name: "replaced at the end", md: "# r\n\n## History\n\nold\n", want: "# r\n\n## History\n\nRun 2 of 2.\n"},
		{name: "replaced in the middle", md: "# r\n\n## History\n\nold\n\n## Method\n\nk6.\n", want: "# r\n\n## Method\n\nk6.\n\n## History\n\nRun 2 of 2.\n"},
		// The history is an answer: it goes before the method, which a report ends with.
		{name: "before how it was decided", md: "# r\n\n## Summary\n\nok\n\n## How this was decided\n\nk6.\n",
			want: "# r\n\n## Summary\n\nok\n\n## History\n\nRun 2 of 2.\n\n## How this was decided\n\nk6.\n"},
		{name: "replaced before how it was decided", md: "# r\n\n## History\n\nold\n\n## How this was decided\n\nk6.\n\n### Notes\n\n- n\n",
			want: "# r\n\n## History\n\nRun 2 of 2.\n\n## How this was decided\n\nk6.\n\n### Notes\n\n- n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := WithHistory(tc.md, section)
			if got != tc.want {
				t.Errorf("WithHistory =\n%q\nwant\n%q", got, tc.want)
			}
			if strings.Count(WithHistory(got, section), "## History") != 1 {
				t.Errorf("writing twice made two sections")
			}
		})
	}
}
