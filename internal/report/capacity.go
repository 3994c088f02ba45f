package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	judgesearch "github.com/perfexp/perfexp/internal/judge/search"
)

// CapacityResult is what a capacity search found: every probe, the answer with its bracket,
// and what limited the capacity. It is what a capacity search's results.json holds.
type CapacityResult struct {
	Sweep     string                        `json:"sweep"`
	Namespace string                        `json:"namespace"`
	Parameter perfexpv1alpha1.LoadParameter `json:"parameter"`
	// Variant describes what every probe changed in the environment; empty when nothing.
	Variant string `json:"variant,omitempty"`
	// The search's settings.
	Min               int64   `json:"min"`
	Max               int64   `json:"max"`
	ResolutionPercent float64 `json:"resolutionPercent"`
	MaxProbes         int     `json:"maxProbes"`
	MaxRepeats        int     `json:"maxRepeats"`
	// Summary is the answer in a few words; LastHeld and FirstBroken its bracket.
	Summary     string `json:"summary"`
	LastHeld    *int32 `json:"lastHeld,omitempty"`
	FirstBroken *int32 `json:"firstBroken,omitempty"`
	StopReason  string `json:"stopReason"`
	// LimitingObjective is the objective furthest beyond its bound at FirstBroken;
	// LimitingWorkload the most throttled or most loaded workload there, if any stood out.
	LimitingObjective string `json:"limitingObjective,omitempty"`
	LimitingWorkload  string `json:"limitingWorkload,omitempty"`
	// RisingWorkload is the workload without a CPU limit whose CPU rose most from the last load
	// that held to the first that broke (a database or broker is often one), if any rose
	// markedly: a limit cannot name it, its use can.
	RisingWorkload string `json:"risingWorkload,omitempty"`
	// Probes by load.
	Probes []CapacityProbe `json:"probes"`
	Notes  []string        `json:"notes,omitempty"`
}

// CapacityProbe is one load level of a search.
type CapacityProbe struct {
	Load int64 `json:"load"`
	// Outcome is Held, Broke or Undecided; Why says why.
	Outcome string `json:"outcome"`
	Why     string `json:"why,omitempty"`
	// Experiments names the probe's runs; Succeeded counts those whose results were used.
	Experiments []string `json:"experiments"`
	Succeeded   int      `json:"succeeded"`
	// Objectives judged over the probe's runs, with their intervals.
	Objectives []judgesearch.ObjectiveInterval `json:"objectives,omitempty"`
	// Limiting is the objective furthest beyond (or nearest to) its bound.
	Limiting string `json:"limiting,omitempty"`
	// Scenarios holds each scenario's statistics, means over the probe's runs.
	Scenarios []SweepScenarioStats `json:"scenarios,omitempty"`
}

// LimitingFactor is what limited the capacity, in one line.
func (r *CapacityResult) LimitingFactor() string {
	var parts []string
	if r.LimitingObjective != "" {
		parts = append(parts, "first objective to break: "+r.LimitingObjective)
	}
	if r.LimitingWorkload != "" {
		parts = append(parts, "most constrained workload: "+r.LimitingWorkload)
	}
	if r.RisingWorkload != "" {
		parts = append(parts, "CPU rising most without a limit: "+r.RisingWorkload)
	}
	return strings.Join(parts, "; ")
}

// probeAt is the probe at a load, nil when there is none.
func (r *CapacityResult) probeAt(load *int32) *CapacityProbe {
	if load == nil {
		return nil
	}
	for i := range r.Probes {
		if r.Probes[i].Load == int64(*load) {
			return &r.Probes[i]
		}
	}
	return nil
}

// CapacityJSON renders a search's results.
func CapacityJSON(r *CapacityResult) ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

// CapacityMarkdown renders the search report: the answer, what limited it, then every probe.
func CapacityMarkdown(r *CapacityResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Capacity search %s\n\n", r.Sweep)
	answer := r.Summary
	if answer == "" {
		answer = "no answer"
	}
	fmt.Fprintf(&b, "**Capacity: %s**", answer)
	switch {
	case r.LastHeld != nil && r.FirstBroken != nil:
		fmt.Fprintf(&b, " — the objectives held at %d %s and did not at %d.", *r.LastHeld, r.Parameter, *r.FirstBroken)
	case r.LastHeld != nil:
		fmt.Fprintf(&b, " — the objectives held up to the top of the range.")
	case r.FirstBroken != nil:
		fmt.Fprintf(&b, " — the objectives did not hold at the lowest load of the range.")
	}
	b.WriteString("\n\n")
	for _, bound := range []struct {
		what string
		load *int32
	}{{"Last load that held", r.LastHeld}, {"First load that did not", r.FirstBroken}} {
		if p := r.probeAt(bound.load); p != nil {
			fmt.Fprintf(&b, "- %s: %d %s, %s — %s\n", bound.what, p.Load, r.Parameter, orDash(p.Outcome), p.Why)
		}
	}
	if r.LastHeld != nil || r.FirstBroken != nil {
		b.WriteString("\n")
	}
	if f := r.LimitingFactor(); f != "" {
		fmt.Fprintf(&b, "Limiting factor: %s.\n\n", f)
	}
	env := "the environment as it is"
	if r.Variant != "" {
		env = "variant " + r.Variant
	}
	fmt.Fprintf(&b, "Search: %s from %d to %d, resolution %g %%, at most %d probes of at most %d runs, on %s. Stopped: %s.\n\n",
		r.Parameter, r.Min, r.Max, r.ResolutionPercent, r.MaxProbes, r.MaxRepeats, env, r.StopReason)

	scenarios := capacityScenarios(r)
	b.WriteString("| " + string(r.Parameter) + " | outcome | runs |")
	for _, s := range scenarios {
		fmt.Fprintf(&b, " %s p95 (ms) | %s req/s | %s errors |", s, s, s)
	}
	b.WriteString(" limiting objective: value [interval] |\n|---|---|---|")
	b.WriteString(strings.Repeat("---|---|---|", len(scenarios)))
	b.WriteString("---|\n")
	for _, p := range r.Probes {
		fmt.Fprintf(&b, "| %d | %s | %d/%d |", p.Load, orDash(p.Outcome), p.Succeeded, len(p.Experiments))
		for _, name := range scenarios {
			var st *SweepScenarioStats
			for i := range p.Scenarios {
				if p.Scenarios[i].Name == name {
					st = &p.Scenarios[i]
				}
			}
			if st == nil {
				b.WriteString(" - | - | - |")
				continue
			}
			fmt.Fprintf(&b, " %s | %s | %s |", num(st.P95, 1), num(st.Rate, 1), pct(st.ErrorPercent))
		}
		fmt.Fprintf(&b, " %s |\n", limitingCell(p))
	}
	b.WriteString("\n## Probes\n\n")
	for _, p := range r.Probes {
		fmt.Fprintf(&b, "- **%d %s**: %s — %s (runs: %s)\n", p.Load, r.Parameter, orDash(p.Outcome), p.Why, strings.Join(p.Experiments, ", "))
		for _, o := range p.Objectives {
			fmt.Fprintf(&b, "  - %s: %s %s\n", o.Name, o.Outcome, intervalText(o))
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

// CapacityHTML renders the search report as one self-contained page: the answer, the p95 and
// throughput curves over the probes, then the Markdown report's tables.
func CapacityHTML(r *CapacityResult) (string, error) {
	var b strings.Builder
	b.WriteString(`<header>`)
	fmt.Fprintf(&b, `<p class="kicker">perfexp capacity search · %s</p><h1>%s</h1>`, esc(r.Namespace), esc(r.Sweep))
	fmt.Fprintf(&b, `<div class="verdicts"><div class="badge" id="headline"><span class="label">Capacity</span><b>%s</b><span class="why">%s</span></div></div>`,
		esc(orDash(r.Summary)), esc(r.LimitingFactor()))
	b.WriteString(`</header><main>`)
	curve := capacityCurve(r)
	label := strings.ToLower(string(r.Parameter))
	section(&b, "capacity", "Probes", capacityChart("p95 against "+label, "p95 (ms)", curve, func(p CapacityPoint) *float64 { return p.P95 })+
		capacityChart("throughput against "+label, "throughput (req/s)", curve, func(p CapacityPoint) *float64 { return p.Rate }))
	b.WriteString(`</main>`)
	md := CapacityMarkdown(r)
	if i := strings.Index(md, "\n"); i >= 0 { // the header shows the title
		md = md[i+1:]
	}
	page, err := htmlPage("perfexp capacity search: "+r.Sweep, b.String(), md)
	if err != nil {
		return "", fmt.Errorf("rendering the capacity report: %w", err)
	}
	return page, nil
}

// capacityCurve is the probes as a sweep over load, for the capacity charts.
func capacityCurve(r *CapacityResult) *SweepResult {
	out := &SweepResult{Sweep: r.Sweep, Namespace: r.Namespace, LoadParameter: r.Parameter}
	for _, p := range r.Probes {
		lv := float64(p.Load)
		out.Arms = append(out.Arms, SweepArmResult{Name: strconv.FormatInt(p.Load, 10), LoadValue: &lv, Scenarios: p.Scenarios})
	}
	return out
}

func capacityScenarios(r *CapacityResult) []string {
	return sweepScenarios(capacityCurve(r))
}

func limitingCell(p CapacityProbe) string {
	for _, o := range p.Objectives {
		if o.Name == p.Limiting {
			return o.Name + ": " + intervalText(o)
		}
	}
	return "-"
}

func intervalText(o judgesearch.ObjectiveInterval) string {
	if o.Value == nil {
		return "no data"
	}
	unit := ""
	if o.Unit != "" {
		unit = " " + o.Unit
	}
	return fmt.Sprintf("%s [%s, %s]%s", num(o.Value, 1), num(o.Low, 1), num(o.High, 1), unit)
}

func pct(v *float64) string {
	if v == nil {
		return "-"
	}
	return num(v, 2) + " %"
}

// ParseCapacityJSON reads results rendered by CapacityJSON.
func ParseCapacityJSON(b []byte) (*CapacityResult, error) {
	r := &CapacityResult{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("reading the capacity results: %w", err)
	}
	return r, nil
}
