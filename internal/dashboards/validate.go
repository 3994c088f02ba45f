package dashboards

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// builtins are the variables Grafana defines itself.
var builtins = map[string]bool{
	"__range": true, "__range_s": true, "__range_ms": true, "__rate_interval": true, "__interval": true,
	"__interval_ms": true, "__from": true, "__to": true, "__dashboard": true, "__org": true, "__user": true,
}

// variableRef matches $name, ${name} and ${name:format} in a query.
var variableRef = regexp.MustCompile(`\$(?:\{([A-Za-z0-9_]+)(?::[A-Za-z]+)?\}|([A-Za-z0-9_]+))`)

// Variables returns the names of the variables s refers to, in order of appearance.
func Variables(s string) []string {
	var out []string
	for _, m := range variableRef.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1]+m[2])
	}
	return out
}

// Validate checks what Grafana needs of a dashboard and does not check itself: a uid it
// accepts, unique panel ids, panels inside the 24-column grid and not overlapping, every panel
// with a query, and every data source and variable a panel, annotation or variable refers to
// defined. It returns every problem found.
func Validate(d *Dashboard) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if d.UID == "" || len(d.UID) > UIDMaxLength {
		fail("uid %q: Grafana needs 1 to %d characters", d.UID, UIDMaxLength)
	}
	vars := map[string]*Variable{}
	for _, v := range d.Templating.List {
		if vars[v.Name] != nil {
			fail("variable %s is defined twice", v.Name)
		}
		vars[v.Name] = v
	}
	checkDS := func(where string, ds *Datasource) {
		if ds == nil {
			fail("%s has no data source", where)
			return
		}
		names := Variables(ds.UID)
		if len(names) != 1 {
			fail("%s: data source %q does not name a variable", where, ds.UID)
			return
		}
		if v := vars[names[0]]; v == nil || v.Type != "datasource" || v.Query != ds.Type {
			fail("%s: data source %q does not resolve to a %s datasource variable", where, ds.UID, ds.Type)
		}
	}
	checkRefs := func(where, s string) {
		for _, n := range Variables(s) {
			if vars[n] == nil && !builtins[n] {
				fail("%s refers to $%s, which is not defined", where, n)
			}
		}
	}
	for _, v := range d.Templating.List {
		if v.Datasource != nil {
			checkDS("variable "+v.Name, v.Datasource)
		}
		if q, ok := v.Query.(string); ok && v.Type == "query" {
			checkRefs("variable "+v.Name, q)
		}
	}
	ids := map[int]string{}
	for _, p := range d.Panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if other, dup := ids[p.ID]; dup {
			fail("%s: id already used by %q", where, other)
		}
		ids[p.ID] = p.Title
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
			fail("%s: grid position %+v is outside the 24-column grid", where, g)
		}
		checkDS(where, p.Datasource)
		if len(p.Targets) == 0 && p.Type != "text" && p.Type != "row" {
			fail("%s has no query", where)
		}
		refs := map[string]bool{}
		for _, t := range p.Targets {
			if strings.TrimSpace(t.Expr) == "" {
				fail("%s: target %s has no expression", where, t.RefID)
			}
			if refs[t.RefID] {
				fail("%s: refId %s used twice", where, t.RefID)
			}
			refs[t.RefID] = true
			if t.Range == t.Instant {
				fail("%s: target %s must be either a range or an instant query", where, t.RefID)
			}
			checkDS(where+" target "+t.RefID, t.Datasource)
			checkRefs(where+" target "+t.RefID, t.Expr)
		}
	}
	for i, a := range d.Panels {
		for _, b := range d.Panels[i+1:] {
			if overlap(a.GridPos, b.GridPos) {
				fail("panels %q and %q overlap", a.Title, b.Title)
			}
		}
	}
	for _, a := range d.Annotations.List {
		where := "annotation " + a.Name
		checkDS(where, a.Datasource)
		if strings.TrimSpace(a.Expr) == "" {
			fail("%s has no query", where)
		}
		checkRefs(where, a.Expr)
	}
	return errors.Join(errs...)
}

func overlap(a, b GridPos) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}
