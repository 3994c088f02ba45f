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
	ms := variableRef.FindAllStringSubmatch(s, -1)
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m[1]+m[2])
	}
	return out
}

// Validate checks what Grafana needs of a dashboard and does not check itself: a uid it
// accepts, unique panel ids, panels inside the 24-column grid and not overlapping, every panel
// with a query, and every data source and variable a panel, annotation or variable refers to
// defined. It returns every problem found.
func Validate(d *Dashboard) error {
	v := &validation{vars: map[string]*Variable{}}
	if d.UID == "" || len(d.UID) > UIDMaxLength {
		v.fail("uid %q: Grafana needs 1 to %d characters", d.UID, UIDMaxLength)
	}
	for _, vr := range d.Templating.List {
		if v.vars[vr.Name] != nil {
			v.fail("variable %s is defined twice", vr.Name)
		}
		v.vars[vr.Name] = vr
	}
	for _, vr := range d.Templating.List {
		if vr.Datasource != nil {
			v.datasource("variable "+vr.Name, vr.Datasource)
		}
		if q, ok := vr.Query.(string); ok && vr.Type == typeQuery {
			v.refs("variable "+vr.Name, q)
		}
	}
	ids := map[int]string{}
	for i, p := range d.Panels {
		if other, dup := ids[p.ID]; dup {
			v.fail("panel %d %q: id already used by %q", p.ID, p.Title, other)
		}
		ids[p.ID] = p.Title
		v.panel(p)
		for _, q := range d.Panels[i+1:] {
			if overlap(p.GridPos, q.GridPos) {
				v.fail("panels %q and %q overlap", p.Title, q.Title)
			}
		}
	}
	for _, a := range d.Annotations.List {
		where := "annotation " + a.Name
		v.datasource(where, a.Datasource)
		if strings.TrimSpace(a.Expr) == "" {
			v.fail("%s has no query", where)
		}
		v.refs(where, a.Expr)
	}
	return errors.Join(v.errs...)
}

// validation collects the problems of one dashboard.
type validation struct {
	vars map[string]*Variable
	errs []error
}

func (v *validation) fail(format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf(format, args...))
}

// datasource checks that a data source reference names a datasource variable of its type.
func (v *validation) datasource(where string, ds *Datasource) {
	if ds == nil {
		v.fail("%s has no data source", where)
		return
	}
	names := Variables(ds.UID)
	if len(names) != 1 {
		v.fail("%s: data source %q does not name a variable", where, ds.UID)
		return
	}
	if vr := v.vars[names[0]]; vr == nil || vr.Type != typeDatasource || vr.Query != ds.Type {
		v.fail("%s: data source %q does not resolve to a %s datasource variable", where, ds.UID, ds.Type)
	}
}

// refs checks that every variable s refers to is defined.
func (v *validation) refs(where, s string) {
	for _, n := range Variables(s) {
		if v.vars[n] == nil && !builtins[n] {
			v.fail("%s refers to $%s, which is not defined", where, n)
		}
	}
}

func (v *validation) panel(p *Panel) {
	where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
	g := p.GridPos
	if g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
		v.fail("%s: grid position %+v is outside the 24-column grid", where, g)
	}
	v.datasource(where, p.Datasource)
	if len(p.Targets) == 0 && p.Type != "text" && p.Type != "row" {
		v.fail("%s has no query", where)
	}
	refIDs := map[string]bool{}
	for _, t := range p.Targets {
		if strings.TrimSpace(t.Expr) == "" {
			v.fail("%s: target %s has no expression", where, t.RefID)
		}
		if refIDs[t.RefID] {
			v.fail("%s: refId %s used twice", where, t.RefID)
		}
		refIDs[t.RefID] = true
		if t.Range == t.Instant {
			v.fail("%s: target %s must be either a range or an instant query", where, t.RefID)
		}
		v.datasource(where+" target "+t.RefID, t.Datasource)
		v.refs(where+" target "+t.RefID, t.Expr)
	}
}

func overlap(a, b GridPos) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}
