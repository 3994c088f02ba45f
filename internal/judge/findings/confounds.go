// Package findings decides what a report leads with: the sentences of its Findings section,
// each backed by a row of the report and never stronger than that row's interval, and the
// confounds, the differences between a baseline's and a run's environments that the declared
// variants do not explain. It is pure: it reads internal/result types and writes them.
package findings

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/perfexp/perfexp/internal/result"
)

// The confound fields that are not a container's.
const (
	fieldWorkload = "workload"
	fieldReplicas = "replicas"
	fieldNodes    = "nodes"
)

// MaxConfounds bounds the confounds a comparison keeps (the rest are counted in a note).
const MaxConfounds = 32

// Confounds lists every difference between the baseline's and the run's inventories that
// neither run's declared variant explains, sorted by workload and field. A workload observed
// in one run only counts as a difference; one that could not be read in either is skipped.
func Confounds(baseline, run []result.WorkloadInventory) []result.Confound {
	base := byRef(baseline)
	cur := byRef(run)
	var out []result.Confound
	for _, ref := range sortedUnion(base, cur) {
		b, inBase := base[ref]
		r, inRun := cur[ref]
		switch {
		case !inBase:
			out = append(out, result.Confound{Workload: ref, Field: fieldWorkload, Run: "observed"})
			continue
		case !inRun:
			out = append(out, result.Confound{Workload: ref, Field: fieldWorkload, Baseline: "observed"})
			continue
		case b.Missing != "" || r.Missing != "":
			continue
		}
		declared := append(slices.Clone(b.Declared), r.Declared...)
		for _, c := range diff(b, r) {
			if !covered(c.Field, declared) {
				c.Workload = ref
				out = append(out, c)
			}
		}
	}
	return out
}

func byRef(ws []result.WorkloadInventory) map[string]*result.WorkloadInventory {
	m := make(map[string]*result.WorkloadInventory, len(ws))
	for i := range ws {
		m[ws[i].Ref()] = &ws[i]
	}
	return m
}

func sortedUnion[V any](a, b map[string]V) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// diff lists every field of two inventories of one workload that differs.
func diff(b, r *result.WorkloadInventory) []result.Confound {
	var out []result.Confound
	if v1, v2 := replicas(b.Replicas), replicas(r.Replicas); v1 != v2 {
		out = append(out, result.Confound{Field: fieldReplicas, Baseline: v1, Run: v2})
	}
	if n1, n2 := strings.Join(b.Nodes, ", "), strings.Join(r.Nodes, ", "); n1 != n2 && n1 != "" && n2 != "" {
		out = append(out, result.Confound{Field: fieldNodes, Baseline: n1, Run: n2})
	}
	bc, rc := containers(b), containers(r)
	for _, name := range sortedUnion(bc, rc) {
		c1, ok1 := bc[name]
		c2, ok2 := rc[name]
		if !ok1 || !ok2 {
			out = append(out, result.Confound{Field: "container/" + name, Baseline: present(ok1), Run: present(ok2)})
			continue
		}
		if c1.Image != c2.Image {
			out = append(out, result.Confound{Field: "image/" + name, Baseline: c1.Image, Run: c2.Image})
		}
		out = append(out, quantities("resources/"+name+"/requests.", c1.Requests, c2.Requests)...)
		out = append(out, quantities("resources/"+name+"/limits.", c1.Limits, c2.Limits)...)
		e1, e2 := env(c1.Env), env(c2.Env)
		for _, v := range sortedUnion(e1, e2) {
			if e1[v] != e2[v] {
				out = append(out, result.Confound{Field: "env/" + name + "/" + v, Baseline: e1[v], Run: e2[v]})
			}
		}
	}
	return out
}

func replicas(p *int32) string {
	if p == nil {
		return ""
	}
	return fmt.Sprint(*p)
}

func present(ok bool) string {
	if ok {
		return "present"
	}
	return ""
}

func containers(w *result.WorkloadInventory) map[string]result.ContainerInventory {
	m := map[string]result.ContainerInventory{}
	for _, c := range w.Containers {
		m[c.Name] = c
	}
	return m
}

func quantities(prefix string, a, b map[string]string) []result.Confound {
	var out []result.Confound
	for _, k := range sortedUnion(a, b) {
		if a[k] != b[k] {
			out = append(out, result.Confound{Field: prefix + k, Baseline: a[k], Run: b[k]})
		}
	}
	return out
}

// env maps each env var to its value, or to where it comes from in brackets.
func env(vs []result.EnvVar) map[string]string {
	m := map[string]string{}
	for _, v := range vs {
		if v.From != "" {
			m[v.Name] = "(" + v.From + ")"
		} else {
			m[v.Name] = v.Value
			if v.Value == "" {
				m[v.Name] = `""`
			}
		}
	}
	return m
}

// covered reports whether a declared field explains a difference: the same field, a field
// that contains it ("container/api" holds the image, env and resources of api; "env/api" all of
// its env vars), or "*" (the whole pod template, and with it replicas too).
func covered(field string, declared []string) bool {
	for _, d := range declared {
		if d == "*" || d == field || strings.HasPrefix(field, d+"/") || strings.HasPrefix(field, d+".") {
			return true
		}
		if name, ok := strings.CutPrefix(d, "container/"); ok {
			if f := strings.SplitN(field, "/", 3); len(f) >= 2 && f[1] == name && f[0] != "container" {
				return true
			}
		}
	}
	return false
}

// ConfoundText is one confound as a phrase: "Deployment/shop/api image/api: shop/api:1.4 (baseline) → shop/api:1.5".
func ConfoundText(c result.Confound) string {
	return fmt.Sprintf("%s %s: %s in the baseline, %s in this run", c.Workload, c.Field, orAbsent(c.Baseline), orAbsent(c.Run))
}

func orAbsent(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

// Bound keeps the first MaxConfounds confounds and says how many were left out.
func Bound(cs []result.Confound) ([]result.Confound, int) {
	sort.SliceStable(cs, func(i, j int) bool { return rank(cs[i].Field) < rank(cs[j].Field) })
	if len(cs) <= MaxConfounds {
		return cs, 0
	}
	return cs[:MaxConfounds], len(cs) - MaxConfounds
}

// rank orders confounds by how much they are likely to matter: an image first, then the
// workload's shape, resources and env, nodes last.
func rank(field string) int {
	for i, p := range []string{"image/", fieldWorkload, "container/", fieldReplicas, "resources/", "env/", fieldNodes} {
		if strings.HasPrefix(field, p) {
			return i
		}
	}
	return 7
}

// Mark records on a comparison what else differed between the baseline's and the run's
// environments (Confounds, the most telling MaxConfounds of them), or why that could not be
// checked (ConfoundsUnknown): a run or a baseline that recorded no inventory.
func Mark(c *result.Comparison, run []result.WorkloadInventory, baseline *result.Result) {
	if c == nil {
		return
	}
	switch {
	case run == nil:
		c.ConfoundsUnknown = "this run recorded no environment inventory"
		return
	case baseline == nil || baseline.Inventory == nil:
		c.ConfoundsUnknown = "the baseline's results hold no environment inventory (a run of an older perfexp, or its report is gone)"
		return
	}
	cs, dropped := Bound(Confounds(baseline.Inventory, run))
	c.Confounds = cs
	if dropped > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d more environment differences beyond the variant are not listed", dropped))
	}
}
