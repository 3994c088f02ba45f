package report

import (
	"strings"
	"testing"

	"github.com/perfexp/perfexp/internal/result"
)

// The findings lead the run and sweep reports, in Markdown and HTML, each with the row behind
// it; the HTML page shows them once, first.
func TestFindingsLeadTheReports(t *testing.T) {
	fs := []result.Finding{
		{Kind: result.FindingEnvironment, Text: "The baseline and this run also differ in shop/api's image (container app) beyond the declared variant: a:1 in the baseline, a:2 here.", Row: "Environment / Deployment/shop/api"},
		{Kind: result.FindingHotSpot, Text: "Hot spot: shop/api ran with its CPU at 138 % of its request.", Row: "Services: CPU / shop/api"},
	}
	run := fixture(t, "run.results.json")
	run.Findings = fs
	md := Markdown(run)
	if i, j := strings.Index(md, "## Findings"), strings.Index(md, "## Compared with baseline"); i < 0 || j < i {
		t.Fatalf("the findings do not come before the comparison:\n%s", md[:min(len(md), 2000)])
	}
	if !strings.Contains(md, "- "+fs[0].Text+" *(Environment / Deployment/shop/api)*") {
		t.Errorf("the environment finding is missing or lacks its row")
	}
	page, err := HTML(run, HTMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(page, "Hot spot: shop/api") != 1 || strings.Index(page, `id="findings"`) > strings.Index(page, `id="latency"`) {
		t.Errorf("the page shows the findings %d times, or not first", strings.Count(page, "Hot spot: shop/api"))
	}

	sweep := sweepFixture(t)
	sweep.Findings = fs
	smd := SweepMarkdown(sweep)
	if i, j := strings.Index(smd, "## Findings"), strings.Index(smd, "| Arm |"); i < 0 || j < i {
		t.Errorf("the sweep's findings do not come before its table of arms")
	}
	spage, err := SweepHTML(sweep)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(spage, "Hot spot: shop/api") != 1 || strings.Index(spage, `id="findings"`) > strings.Index(spage, `id="verdicts"`) {
		t.Errorf("the sweep page shows the findings %d times, or not first", strings.Count(spage, "Hot spot: shop/api"))
	}
}
