package report

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// KeyHTML is the report as a page with charts.
const KeyHTML = "report.html"

// HTMLOptions are what the page draws beyond the run's own results.
type HTMLOptions struct {
	// Baseline is the baseline run's full result (its results.json), whose latency and
	// throughput over time, latency distribution and services are drawn beside this run's.
	// Nil draws this run alone; the comparison's numbers come from the run's own result either
	// way.
	Baseline *result.Result
}

// HTML renders the report as one self-contained page a reader can forward: a header with the
// verdict first, then charts (inline SVG, no scripts, nothing fetched), then the Markdown
// report's tables for the details.
func HTML(r *result.Result, opts HTMLOptions) (string, error) {
	base := opts.Baseline
	var b strings.Builder
	writeRunHeader(&b, r, base)
	b.WriteString(`<main>`)
	if len(r.Findings) > 0 {
		section(&b, "findings", "Findings", htmlFindings(r.Findings))
	}
	section(&b, "latency", "Latency over time", latencyOverTime(r, base))
	section(&b, "distribution", "Latency distribution", latencyDistribution(r, base))
	section(&b, "comparison", "Change against the baseline", comparisonCharts(r.Comparison))
	section(&b, "throughput", "Throughput and errors over time", throughputOverTime(r, base))
	section(&b, "services", "Services: CPU and memory", serviceCharts(r, base))
	b.WriteString(`</main>`)
	page, err := htmlPage("perfexp report: "+r.Experiment, b.String(), withoutSection(afterOverview(Markdown(r)), "Findings"))
	if err != nil {
		return "", fmt.Errorf("rendering the report: %w", err)
	}
	return page, nil
}

// afterOverview drops the Markdown report's title and overview table, which the page's header
// shows; the tables below them stay as the page's details.
func afterOverview(md string) string {
	if i := strings.Index(md, "\n## "); i >= 0 {
		return md[i+1:]
	}
	return md
}

// section is one titled part of the page.
func section(b *strings.Builder, id, title, body string) {
	fmt.Fprintf(b, `<section id="%s"><h2>%s</h2>%s</section>`, id, esc(title), body)
}

// figure wraps a chart with its caption.
func figure(class, svg, caption string) string {
	return fmt.Sprintf(`<figure class="%s">%s<figcaption>%s</figcaption></figure>`, class, svg, caption)
}

// noData says plainly what is missing and why, where a chart would be.
func noData(what string) string { return `<p class="nodata">` + what + `</p>` }

// writeRunHeader is what a reader needs before any chart: which experiment, what it changed,
// when it ran, the headline change against the baseline and the verdict with its objectives.
func writeRunHeader(b *strings.Builder, r *result.Result, base *result.Result) {
	b.WriteString(`<header>`)
	fmt.Fprintf(b, `<p class="kicker">perfexp performance test report · %s</p>`, esc(r.Namespace))
	fmt.Fprintf(b, `<h1>%s</h1>`, esc(r.Experiment))
	variant := r.Variant
	if variant == "" {
		variant = "none (the environment as it is)"
	}
	fmt.Fprintf(b, `<p class="variant"><span>Variant</span> %s</p>`, esc(variant))

	b.WriteString(`<div class="verdicts">`)
	if c := r.Comparison; c != nil {
		change := string(c.Change)
		if change == "" {
			change = string(perfexpv1alpha1.ChangeUnknown)
		}
		fmt.Fprintf(b, `<div class="badge" id="headline" style="border-color:%[1]s"><span class="label">Against baseline %[2]s</span><b style="color:%[1]s">%[3]s</b><span class="why">%[4]s</span></div>`,
			changeColor(change), esc(c.Baseline), esc(changeWords(change)), esc(headlineWhy(c)))
	} else {
		b.WriteString(`<div class="badge" id="headline"><span class="label">Against a baseline</span><b style="color:#6e7781">No baseline</b><span class="why">This run was not compared with another.</span></div>`)
	}
	verdict := string(r.Verdict)
	if verdict == "" {
		verdict = "-"
	}
	fmt.Fprintf(b, `<div class="badge" style="border-color:%[1]s"><span class="label">Verdict</span><b style="color:%[1]s">%[2]s</b><span class="why">%[3]s</span></div>`,
		verdictColor(r.Verdict), esc(verdict), esc(objectivesLine(r.Objectives)))
	validity := string(r.Validity)
	if validity == "" {
		validity = "-"
	}
	why := "the load ran as declared"
	if len(r.InvalidReasons) > 0 {
		why = strings.Join(r.InvalidReasons, "; ")
	}
	validColor := colorImproved
	if r.Validity != perfexpv1alpha1.Valid {
		validColor = colorRegressed
	}
	fmt.Fprintf(b, `<div class="badge" style="border-color:%[1]s"><span class="label">Validity</span><b style="color:%[1]s">%[2]s</b><span class="why">%[3]s</span></div>`,
		validColor, esc(validity), esc(why))
	b.WriteString(`</div>`)

	writeKPIs(b, r, base)

	b.WriteString(`<dl class="facts">`)
	fact := func(k, v string) { fmt.Fprintf(b, `<div><dt>%s</dt><dd>%s</dd></div>`, esc(k), esc(v)) }
	fact("Window", fmt.Sprintf("%s to %s", ts(r.Window.Start), ts(r.Window.End)))
	if r.Window.WarmUpEnd != nil {
		fact("Warm-up", "until "+ts(*r.Window.WarmUpEnd)+" (excluded)")
	}
	fact("Measured", dur(r.Window.MeasuredSeconds))
	fact("Test ID", r.TestID)
	fact("Latency source", latencySource(r))
	if c := r.Comparison; c != nil {
		fact("Baseline", c.Baseline)
	}
	b.WriteString(`</dl>`)

	if len(r.Objectives) > 0 {
		b.WriteString(`<ul class="objectives">`)
		for _, o := range r.Objectives {
			mark, color := "?", colorInconclusive
			switch o.Outcome {
			case perfexpv1alpha1.ObjectiveMet:
				mark, color = "✓", colorImproved
			case perfexpv1alpha1.ObjectiveMissed:
				mark, color = "✗", colorRegressed
			}
			detail := o.Message
			if detail == "" {
				detail = withUnit(o.Value, o.Unit)
			}
			fmt.Fprintf(b, `<li><b style="color:%s">%s %s</b> %s <span class="muted">· %s</span></li>`,
				color, mark, esc(string(o.Outcome)), esc(o.Name), esc(detail))
		}
		b.WriteString(`</ul>`)
	}
	b.WriteString(`</header>`)
}

// changeWords spells a verdict for a headline.
func changeWords(change string) string {
	if change == string(perfexpv1alpha1.ChangeNoMeaningfulChange) {
		return "No meaningful change"
	}
	return change
}

// headlineWhy is the comparison's message, or how the headline was decided.
func headlineWhy(c *result.Comparison) string {
	if c.Message != "" {
		return c.Message
	}
	if len(c.Metrics) == 0 {
		return ""
	}
	return fmt.Sprintf("decided on the primary metrics; ±%g %% is the minimum meaningful change", c.MinChangePercent)
}

// objectivesLine counts the objectives' outcomes.
func objectivesLine(objs []result.ObjectiveResult) string {
	if len(objs) == 0 {
		return "no objectives declared"
	}
	counts := map[perfexpv1alpha1.ObjectiveOutcome]int{}
	for _, o := range objs {
		counts[o.Outcome]++
	}
	var parts []string
	for _, o := range []perfexpv1alpha1.ObjectiveOutcome{perfexpv1alpha1.ObjectiveMet, perfexpv1alpha1.ObjectiveMissed, perfexpv1alpha1.ObjectiveUnknown} {
		if counts[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[o], strings.ToLower(string(o))))
		}
	}
	return fmt.Sprintf("objectives: %s of %d", strings.Join(parts, ", "), len(objs))
}

func verdictColor(v perfexpv1alpha1.Verdict) string {
	switch v {
	case perfexpv1alpha1.VerdictPass:
		return colorImproved
	case perfexpv1alpha1.VerdictFail, perfexpv1alpha1.VerdictInvalid:
		return colorRegressed
	case perfexpv1alpha1.VerdictInconclusive:
		return colorInconclusive
	}
	return "#6e7781"
}

// writeKPIs shows the run's headline numbers (all scenarios together) beside the baseline's.
// The plain difference is shown, not a verdict: the comparison section says what is real.
func writeKPIs(b *strings.Builder, r *result.Result, base *result.Result) {
	type kpi struct {
		label, unit string
		decimals    int
		get         func(result.RequestStats) *float64
	}
	kpis := []kpi{
		{nameP95, "ms", 1, func(s result.RequestStats) *float64 { return s.P95 }},
		{nameP99, "ms", 1, func(s result.RequestStats) *float64 { return s.P99 }},
		{"avg", "ms", 1, func(s result.RequestStats) *float64 { return s.Avg }},
		{"throughput", unitPerSecond, 1, func(s result.RequestStats) *float64 { return s.Rate }},
		{"errors", "%", 2, func(s result.RequestStats) *float64 { return s.ErrorPercent }},
	}
	b.WriteString(`<div class="kpis">`)
	for _, k := range kpis {
		v := k.get(r.Total)
		fmt.Fprintf(b, `<div class="kpi"><span class="label">%s</span><span><b>%s</b> <span class="unit">%s</span></span>`, esc(k.label), num(v, k.decimals), esc(k.unit))
		if base != nil {
			bv := k.get(base.Total)
			diff := ""
			if v != nil && bv != nil && *bv != 0 && k.unit != "%" {
				diff = fmt.Sprintf(" (%+.1f %%)", 100*(*v-*bv) / *bv)
			} else if v != nil && bv != nil && k.unit == "%" {
				diff = fmt.Sprintf(" (%+.2f pt)", *v-*bv)
			}
			fmt.Fprintf(b, `<span class="was">baseline %s%s</span>`, esc(num(bv, k.decimals)), esc(diff))
		}
		b.WriteString(`</div>`)
	}
	b.WriteString(`</div>`)
	if base != nil {
		b.WriteString(`<p class="muted small">All scenarios together. In brackets the plain difference from the baseline; whether a change is real is what the comparison below says.</p>`)
	} else {
		b.WriteString(`<p class="muted small">All scenarios together.</p>`)
	}
}

// htmlPage is one self-contained page (no scripts, no external resources): the visual part,
// then the Markdown rendered by goldmark with GitHub's table extension under "Details".
func htmlPage(title, visual, markdown string) (string, error) {
	body, err := markdownHTML(markdown)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<style>%s</style></head><body>
`, esc(title), pageCSS)
	b.WriteString(visual)
	b.WriteString(`<section id="details" class="details"><h2>Details</h2>`)
	b.WriteString(body)
	b.WriteString("</section></body></html>\n")
	return b.String(), nil
}

// markdownHTML renders Markdown with goldmark and GitHub's table extension.
func markdownHTML(markdown string) (string, error) {
	var body bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert([]byte(markdown), &body); err != nil {
		return "", err
	}
	return body.String(), nil
}

// pageCSS lays the page out for a screen about 1000 px wide and for print: charts keep their
// aspect ratio, never split across pages, and the verdict colours print.
const pageCSS = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1040px;margin:1.5em auto;padding:0 1.2em;color:#24292f;line-height:1.45;-webkit-print-color-adjust:exact;print-color-adjust:exact}
header{border-bottom:1px solid #d0d7de;padding-bottom:1em;margin-bottom:.5em}
.kicker{margin:0;color:#57606a;font-size:.9em;text-transform:uppercase;letter-spacing:.04em}
h1{margin:.1em 0 .2em;font-size:2em}
h2{font-size:1.35em;margin:1.6em 0 .5em;padding-bottom:.2em;border-bottom:1px solid #eaeef2}
h3{font-size:1.05em;margin:1.2em 0 .3em}
.variant{margin:.2em 0 1em;font-size:1.1em}.variant span,.label,dt{color:#57606a;font-size:.8rem;text-transform:uppercase;letter-spacing:.04em}
.verdicts{display:flex;gap:.8em;flex-wrap:wrap}
.badge{flex:1 1 200px;border:2px solid #d0d7de;border-left-width:8px;border-radius:6px;padding:.5em .8em;display:flex;flex-direction:column}
.badge b{font-size:1.6em;line-height:1.2}.why{color:#57606a;font-size:.88em}
.kpis{display:flex;gap:.6em;margin:1em 0 .2em;flex-wrap:wrap}.small{font-size:.85em;margin:0 0 .8em}
.kpi{flex:1 1 150px;background:#f6f8fa;border-radius:6px;padding:.5em .8em;display:flex;flex-direction:column}
.kpi b{font-size:1.45em;font-variant-numeric:tabular-nums}.kpi .unit{color:#57606a}.was{color:#57606a;font-size:.85em}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:.3em 1.2em;margin:.5em 0}
.facts div{display:flex;flex-direction:column}dd{margin:0}
.objectives{list-style:none;padding:0;margin:.6em 0 0}.objectives li{margin:.15em 0}.muted{color:#57606a}.findings li{margin:.3em 0}.findings .row{color:#57606a;font-size:.85em}.finding-environment{font-weight:600}
figure{margin:.4em 0 1.2em;break-inside:avoid;page-break-inside:avoid}
figure svg{width:100%;height:auto;display:block}
figcaption,.note{color:#57606a;font-size:.88em;margin-top:.2em}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:.4em 1.5em}.grid figure{margin:0}figcaption.title{color:#24292f;font-weight:600;font-size:.95em;margin:0}
.nodata{background:#f6f8fa;border:1px dashed #d0d7de;border-radius:6px;padding:.8em 1em;color:#57606a}
.details{font-size:.92em}
table{border-collapse:collapse;margin:1em 0;font-size:.92em}td,th{border:1px solid #d0d7de;padding:.25em .5em}th{background:#f6f8fa}
td[style*="right"],th[style*="right"]{font-variant-numeric:tabular-nums}
#verdicts td:last-child{white-space:nowrap}
section[id^="arm-"] table{font-size:.82em;margin:.4em 0 1em}section[id^="arm-"] h3{margin:1em 0 0}section[id^="arm-"] td{white-space:nowrap}section[id^="arm-"] td,section[id^="arm-"] th{padding:.2em .35em}
@media print{body{max-width:none;margin:0}h2{break-after:avoid}.details{font-size:.8em}}
`

// nan is a missing value in a drawn series.
var nan = math.NaN()
