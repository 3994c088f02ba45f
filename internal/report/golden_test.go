package report

import "testing"

// The reports rendered from stored results (the real analysis's output, see
// fixtures_gen_test.go) are compared byte for byte with committed golden files: a change to
// where the result types or the verdict code live must not change a single byte a reader sees.
// Regenerate with go test ./internal/report -run TestStoredResultsGolden -update after checking
// the diff.
func TestStoredResultsGolden(t *testing.T) {
	run, base := fixture(t, "run.results.json"), fixture(t, "baseline.results.json")
	page, err := HTML(run, HTMLOptions{Baseline: base})
	if err != nil {
		t.Fatal(err)
	}
	js, err := JSON(run)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "run.report.md.golden", []byte(Markdown(run)))
	golden(t, "run.report.json.golden", js)
	golden(t, "run.report.html.golden", []byte(page))

	sweep := sweepFixture(t)
	sweepPage, err := SweepHTML(sweep)
	if err != nil {
		t.Fatal(err)
	}
	sweepJS, err := SweepJSON(sweep)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep.report.md.golden", []byte(SweepMarkdown(sweep)))
	golden(t, "sweep.report.json.golden", sweepJS)
	golden(t, "sweep.report.html.golden", []byte(sweepPage))
}
