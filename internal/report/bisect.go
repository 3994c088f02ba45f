package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/perfexp/perfexp/internal/result"
)

// BisectResult is what a performance bisect found: the culprits, and every step with its
// comparison. It is what a bisect's results.json holds.
type BisectResult struct {
	Sweep     string `json:"sweep"`
	Namespace string `json:"namespace"`
	// Services are the changed services with their old and new images.
	Services []BisectService `json:"services"`
	// Culprits name the services whose new images make the difference; Interaction is true
	// when they do only together.
	Culprits    []string `json:"culprits,omitempty"`
	Interaction bool     `json:"interaction,omitempty"`
	Summary     string   `json:"summary"`
	StopReason  string   `json:"stopReason"`
	// Duration is how long the bisect held the environment, from its creation to its answer.
	Duration string       `json:"duration,omitempty"`
	Steps    []BisectStep `json:"steps"`
}

// BisectService is one changed service.
type BisectService struct {
	Name      string `json:"name"`
	Container string `json:"container"`
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
}

// BisectStep is one step: the services whose new images it applied, its outcome, its runs and
// their comparison with the old release's runs of the same step.
type BisectStep struct {
	Services            []string           `json:"services"`
	Outcome             string             `json:"outcome"`
	Message             string             `json:"message,omitempty"`
	Experiments         []string           `json:"experiments"`
	BaselineExperiments []string           `json:"baselineExperiments"`
	Comparison          *result.Comparison `json:"comparison,omitempty"`
}

// BisectJSON renders a bisect's results.
func BisectJSON(r *BisectResult) ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

// ParseBisectJSON reads results rendered by BisectJSON.
func ParseBisectJSON(b []byte) (*BisectResult, error) {
	r := &BisectResult{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("reading the bisect results: %w", err)
	}
	return r, nil
}

// BisectMarkdown renders the bisect report: the answer, then the tree of steps.
func BisectMarkdown(r *BisectResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Performance bisect %s\n\n", r.Sweep)
	fmt.Fprintf(&b, "**Culprit: %s**", orDash(r.Summary))
	if r.Interaction {
		b.WriteString(" — an interaction: no single service's new image reproduces the regression alone.")
	}
	fmt.Fprintf(&b, "\n\n%s. %d steps", r.StopReason, len(r.Steps))
	if r.Duration != "" {
		fmt.Fprintf(&b, ", %s of environment time", r.Duration)
	}
	fmt.Fprintf(&b, ", %d changed services.\n\n", len(r.Services))
	b.WriteString("| step | new images of | outcome | runs | comparison with the old release |\n|---|---|---|---|---|\n")
	for i, s := range r.Steps {
		fmt.Fprintf(&b, "| %d | %s | %s | %d + %d | %s |\n", i+1, describeNames(s.Services, len(r.Services)), orDash(s.Outcome),
			len(s.Experiments), len(s.BaselineExperiments), strings.ReplaceAll(orDash(s.Message), "|", "/"))
	}
	b.WriteString("\n## Services\n\n| service | container | baseline image | candidate image |\n|---|---|---|---|\n")
	for _, s := range r.Services {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", s.Name, s.Container, s.Baseline, s.Candidate)
	}
	return b.String()
}

// BisectHTML renders the bisect report as one self-contained page.
func BisectHTML(r *BisectResult) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, `<header><p class="kicker">perfexp bisect · %s</p><h1>%s</h1>`, esc(r.Namespace), esc(r.Sweep))
	fmt.Fprintf(&b, `<div class="verdicts"><div class="badge" id="headline"><span class="label">Culprit</span><b>%s</b><span class="why">%s</span></div></div></header>`,
		esc(orDash(r.Summary)), esc(r.StopReason))
	md := BisectMarkdown(r)
	if i := strings.Index(md, "\n"); i >= 0 {
		md = md[i+1:]
	}
	page, err := htmlPage("perfexp bisect: "+r.Sweep, b.String(), md)
	if err != nil {
		return "", fmt.Errorf("rendering the bisect report: %w", err)
	}
	return page, nil
}

func describeNames(names []string, total int) string {
	if len(names) == total {
		return fmt.Sprintf("all %d", total)
	}
	return strings.Join(names, ", ")
}
