// The report's Findings section (decided by internal/judge/findings) and its Environment
// section, the inventory and the differences beyond the variant that back the environment
// findings.

package report

import (
	"fmt"
	"strings"

	"github.com/perfexp/perfexp/internal/result"
)

// findings is the Findings section: one sentence a line, with the row that backs it.
func (m *markdown) findings(fs []result.Finding) {
	if len(fs) == 0 {
		return
	}
	m.printf("## Findings\n\n")
	for _, f := range fs {
		m.printf("- %s", f.Text)
		if f.Row != "" {
			m.printf(" *(%s)*", f.Row)
		}
		m.printf("\n")
	}
	m.printf("\n")
}

// confoundedRow is the overview's line for a comparison whose environments differ beyond the
// declared variant (the Confounded condition's True): the verdict's reader sees it beside the
// verdict, before any change.
func (m *markdown) confoundedRow(c *result.Comparison) {
	if c == nil || len(c.Confounds) == 0 {
		return
	}
	first := c.Confounds[0]
	m.printf("| Confounded | **yes**: beside the declared variant, this run and baseline %s also differ in %d thing(s), first %s %s (%s in the baseline, %s here); see Environment |\n",
		cell(c.Baseline), len(c.Confounds), cell(first.Workload), cell(first.Field), cell(orAbsentValue(first.Baseline)), cell(orAbsentValue(first.Run)))
}

// environment is the run's inventory, and with a baseline what else differed between the two.
func (m *markdown) environment(r *result.Result) {
	c := r.Comparison
	hasConfounds := c != nil && (len(c.Confounds) > 0 || c.ConfoundsUnknown != "")
	if len(r.Inventory) == 0 && !hasConfounds {
		return
	}
	m.printf("## Environment\n\n")
	if c != nil {
		switch {
		case c.ConfoundsUnknown != "":
			m.printf("Not compared with the baseline's environment: %s.\n\n", strings.TrimSuffix(c.ConfoundsUnknown, "."))
		case len(c.Confounds) == 0:
			m.printf("Beside the declared variant, the environment matched baseline %s's: the same images, replicas, resources, env and nodes.\n\n", c.Baseline)
		default:
			m.printf("**Confounded:** beside the declared variant, this run and baseline %s also differ in:\n\n", c.Baseline)
			m.printf("| Workload | What | Baseline | This run |\n|---|---|---|---|\n")
			for _, cf := range c.Confounds {
				m.printf("| %s | %s | %s | %s |\n", cell(cf.Workload), cell(cf.Field), cell(orAbsentValue(cf.Baseline)), cell(orAbsentValue(cf.Run)))
			}
			m.printf("\n")
		}
	}
	if len(r.Inventory) == 0 {
		return
	}
	m.printf("What each workload ran with when the measured window began (env vars and their values, Secrets and ConfigMaps by reference only, are in results.json):\n\n")
	m.printf("| Workload | Replicas | Images | CPU request / limit | Memory request / limit | Env vars | Nodes | Changed by the variant |\n|---|---:|---|---|---|---:|---|---|\n")
	for _, w := range r.Inventory {
		if w.Missing != "" {
			m.printf("| %s | - | %s | | | | | |\n", cell(w.Ref()), cell(w.Missing))
			continue
		}
		var images, cpu, mem []string
		env := 0
		for _, ct := range w.Containers {
			images = append(images, ct.Name+": `"+ct.Image+"`")
			cpu = append(cpu, orDash(ct.Requests["cpu"])+" / "+orDash(ct.Limits["cpu"]))
			mem = append(mem, orDash(ct.Requests["memory"])+" / "+orDash(ct.Limits["memory"]))
			env += len(ct.Env) + ct.EnvDropped
		}
		replicas := "-"
		if w.Replicas != nil {
			replicas = fmt.Sprint(*w.Replicas)
		}
		m.printf("| %s | %s | %s | %s | %s | %d | %s | %s |\n", cell(w.Ref()), replicas, cell(strings.Join(images, "; ")), cell(strings.Join(cpu, "; ")),
			cell(strings.Join(mem, "; ")), env, cell(orDash(strings.Join(w.Nodes, ", "))), cell(orDash(strings.Join(w.Declared, ", "))))
	}
	m.printf("\n")
}

func orAbsentValue(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

// htmlFindings is the page's Findings list, first in its main part.
func htmlFindings(fs []result.Finding) string {
	if len(fs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<ul class="findings">`)
	for _, f := range fs {
		fmt.Fprintf(&b, `<li class="finding-%s">%s`, strings.ToLower(f.Kind), esc(f.Text))
		if f.Row != "" {
			fmt.Fprintf(&b, ` <span class="row">(%s)</span>`, esc(f.Row))
		}
		b.WriteString(`</li>`)
	}
	b.WriteString(`</ul>`)
	return b.String()
}

// withoutSection drops one "## title" section from a Markdown report.
func withoutSection(md, title string) string {
	head := "## " + title + "\n"
	start := 0
	if !strings.HasPrefix(md, head) {
		i := strings.Index(md, "\n"+head)
		if i < 0 {
			return md
		}
		start = i + 1
	}
	end := strings.Index(md[start:], "\n## ")
	if end < 0 {
		return md[:start]
	}
	return md[:start] + md[start+end+1:]
}
