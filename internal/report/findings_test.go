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

// A confounded comparison says so in the overview, beside the verdict, with the first
// difference and how many there are; a comparison whose environments matched adds no line.
func TestConfoundedComparisonInTheOverview(t *testing.T) {
	run := fixture(t, "run.results.json")
	run.Comparison.Confounds = []result.Confound{
		{Workload: "Deployment/shop/api", Field: "image/api", Baseline: "shop/api:1.4", Run: "shop/api:1.5"},
		{Workload: "Deployment/shop/api", Field: "replicas", Baseline: "2", Run: "3"},
	}
	md := Markdown(run)
	row := "| Confounded | **yes**: beside the declared variant, this run and baseline " + run.Comparison.Baseline +
		" also differ in 2 thing(s), first Deployment/shop/api image/api (shop/api:1.4 in the baseline, shop/api:1.5 here); see Environment |"
	if i, v := strings.Index(md, row), strings.Index(md, "| Validity |"); i < 0 || i < v || i > strings.Index(md, "## Findings") {
		t.Errorf("no confounded row after the validity:\n%s", md[:min(len(md), 1500)])
	}
	run.Comparison.Confounds = nil
	if strings.Contains(Markdown(run), "| Confounded |") {
		t.Errorf("a comparison without confounds is marked confounded")
	}
}
