// Package dashboards builds perfexp's Grafana dashboards: one per experiment (written by the
// operator into a ConfigMap for Grafana's dashboard sidecar), an overview of the queues and
// recent experiments, and one for a sweep's arms (both shipped as files and by the Helm chart).
//
// The dashboards are plain Grafana dashboard JSON: no Grafana SDK is needed for the small part
// of the model perfexp uses, and Grafana itself cannot run in perfexp's tests. Validate checks
// the structure Grafana relies on; the tests execute every query against a real Prometheus.
package dashboards

import (
	"encoding/json"
	"fmt"
)

// tagPerfexp tags every perfexp dashboard, so Grafana's search finds them together.
const tagPerfexp = "perfexp"

// Variable types used.
const (
	typeQuery      = "query"
	typeDatasource = "datasource"
)

// UIDMaxLength is the longest dashboard uid Grafana accepts.
const UIDMaxLength = 40

// DatasourceVariable is the name of the variable every panel's data source refers to, so a
// dashboard works with whatever the Prometheus data source is called in a Grafana.
const DatasourceVariable = "datasource"

// Dashboard is the part of Grafana's dashboard model perfexp writes.
type Dashboard struct {
	UID           string      `json:"uid"`
	Title         string      `json:"title"`
	Description   string      `json:"description,omitempty"`
	Tags          []string    `json:"tags"`
	SchemaVersion int         `json:"schemaVersion"`
	Editable      bool        `json:"editable"`
	Refresh       string      `json:"refresh,omitempty"`
	Time          TimeRange   `json:"time"`
	Templating    Templating  `json:"templating"`
	Annotations   Annotations `json:"annotations"`
	Panels        []*Panel    `json:"panels"`
}

// TimeRange is the dashboard's time range: RFC 3339 times, or Grafana's relative ones (now-24h).
type TimeRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Templating holds the dashboard's variables.
type Templating struct {
	List []*Variable `json:"list"`
}

// Variable is a template variable. Type is datasource, constant, textbox, custom or query.
type Variable struct {
	Name       string      `json:"name"`
	Label      string      `json:"label,omitempty"`
	Type       string      `json:"type"`
	Query      any         `json:"query"`
	Datasource *Datasource `json:"datasource,omitempty"`
	Current    *Option     `json:"current,omitempty"`
	Options    []Option    `json:"options,omitempty"`
	// Hide: 0 shows label and value, 2 hides the variable.
	Hide       int    `json:"hide"`
	Multi      bool   `json:"multi,omitempty"`
	IncludeAll bool   `json:"includeAll,omitempty"`
	Refresh    int    `json:"refresh,omitempty"`
	Regex      string `json:"regex,omitempty"`
	Sort       int    `json:"sort,omitempty"`
	// Description says what the variable is for, shown as its tooltip.
	Description string `json:"description,omitempty"`
}

// Option is a variable's value.
type Option struct {
	Text     any  `json:"text"`
	Value    any  `json:"value"`
	Selected bool `json:"selected"`
}

// Datasource refers to a data source, here always through the datasource variable.
type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Annotations holds the annotation queries.
type Annotations struct {
	List []*Annotation `json:"list"`
}

// Annotation is a Prometheus annotation query: every step where a series of Expr has a value
// is marked; consecutive steps of one series make a region.
type Annotation struct {
	Name        string      `json:"name"`
	Datasource  *Datasource `json:"datasource"`
	Enable      bool        `json:"enable"`
	IconColor   string      `json:"iconColor"`
	Expr        string      `json:"expr"`
	Step        string      `json:"step,omitempty"`
	TitleFormat string      `json:"titleFormat,omitempty"`
	TextFormat  string      `json:"textFormat,omitempty"`
	TagKeys     string      `json:"tagKeys,omitempty"`
	// UseValueForTime false: the sample's time, not its value, places the annotation.
	UseValueForTime bool `json:"useValueForTime"`
}

// Panel is a panel. Only timeseries, stat, table, bargauge and text panels are used.
type Panel struct {
	ID          int          `json:"id"`
	Type        string       `json:"type"`
	Title       string       `json:"title"`
	Description string       `json:"description,omitempty"`
	Datasource  *Datasource  `json:"datasource,omitempty"`
	GridPos     GridPos      `json:"gridPos"`
	FieldConfig FieldConfig  `json:"fieldConfig"`
	Options     any          `json:"options,omitempty"`
	Targets     []*Target    `json:"targets"`
	Transforms  []*Transform `json:"transformations,omitempty"`
}

// GridPos places a panel on Grafana's 24-column grid.
type GridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// FieldConfig holds a panel's field defaults.
type FieldConfig struct {
	Defaults  FieldDefaults `json:"defaults"`
	Overrides []any         `json:"overrides"`
}

// FieldDefaults are the defaults of every field of a panel.
type FieldDefaults struct {
	Unit     string `json:"unit,omitempty"`
	Decimals *int   `json:"decimals,omitempty"`
	// NoValue is shown where a query returned nothing.
	NoValue string   `json:"noValue,omitempty"`
	Min     *float64 `json:"min,omitempty"`
}

// Target is one Prometheus query of a panel. Instant queries are evaluated once, at the end of
// the dashboard's time range; range queries over it.
type Target struct {
	RefID        string      `json:"refId"`
	Datasource   *Datasource `json:"datasource"`
	Expr         string      `json:"expr"`
	LegendFormat string      `json:"legendFormat,omitempty"`
	Range        bool        `json:"range"`
	Instant      bool        `json:"instant"`
	// Format is time_series (default) or table.
	Format string `json:"format,omitempty"`
}

// Transform is a Grafana transformation of a panel's data (used by tables).
type Transform struct {
	ID      string `json:"id"`
	Options any    `json:"options"`
}

// JSON renders the dashboard as indented JSON.
func (d *Dashboard) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("rendering dashboard %s: %w", d.UID, err)
	}
	return append(b, '\n'), nil
}

// promDS is the reference every panel, target and annotation uses.
func promDS() *Datasource {
	return &Datasource{Type: "prometheus", UID: "${" + DatasourceVariable + "}"}
}

func datasourceVariable() *Variable {
	return &Variable{Name: DatasourceVariable, Label: "Prometheus", Type: typeDatasource, Query: "prometheus",
		Description: "The Prometheus that holds the k6 samples (remote write), cAdvisor's series and perfexp's own metrics."}
}

func constant(name, value string) *Variable {
	o := Option{Text: value, Value: value, Selected: true}
	return &Variable{Name: name, Type: "constant", Query: value, Current: &o, Options: []Option{o}, Hide: 2}
}

func textbox(name, label, value, description string) *Variable {
	o := Option{Text: value, Value: value, Selected: true}
	return &Variable{Name: name, Label: label, Type: "textbox", Query: value, Current: &o, Options: []Option{o}, Description: description}
}

// layout places panels row by row on the 24-column grid.
type layout struct {
	panels []*Panel
	x, y   int
	rowH   int
}

// add places p with width w and height h after the previous panel, wrapping to a new row when
// the row is full, and gives it the next id and the datasource reference.
func (l *layout) add(w, h int, p *Panel) *Panel {
	if l.x+w > 24 {
		l.y += l.rowH
		l.x, l.rowH = 0, 0
	}
	p.ID = len(l.panels) + 1
	p.GridPos = GridPos{H: h, W: w, X: l.x, Y: l.y}
	p.Datasource = promDS()
	if p.FieldConfig.Overrides == nil {
		p.FieldConfig.Overrides = []any{}
	}
	for i, t := range p.Targets {
		t.RefID = refID(i)
		t.Datasource = promDS()
	}
	l.x += w
	l.rowH = max(l.rowH, h)
	l.panels = append(l.panels, p)
	return p
}

func refID(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprintf("A%d", i)
}

func rangeQ(expr, legend string) *Target {
	return &Target{Expr: expr, LegendFormat: legend, Range: true}
}

func instantQ(expr, legend string) *Target {
	return &Target{Expr: expr, LegendFormat: legend, Instant: true}
}

func tableQ(expr string) *Target {
	return &Target{Expr: expr, Instant: true, Format: "table"}
}

func timeseries(title, unit, description string, targets ...*Target) *Panel {
	return &Panel{Type: "timeseries", Title: title, Description: description,
		FieldConfig: FieldConfig{Defaults: FieldDefaults{Unit: unit}}, Targets: targets}
}

func stat(title, unit, description string, targets ...*Target) *Panel {
	return &Panel{Type: "stat", Title: title, Description: description,
		FieldConfig: FieldConfig{Defaults: FieldDefaults{Unit: unit}},
		Options:     statOptions(),
		Targets:     targets}
}

// statOptions are a stat panel's options in full, as Grafana's dashboard schema requires them:
// the last value with its name, and Grafana's own defaults for the rest (what Grafana fills in
// when they are missing, so the panel looks the same either way).
func statOptions() map[string]any {
	return map[string]any{
		"reduceOptions":          map[string]any{"calcs": []string{"lastNotNull"}, "fields": "", "values": false},
		"textMode":               "value_and_name",
		"graphMode":              "area",
		"colorMode":              "value",
		"justifyMode":            "auto",
		"orientation":            "auto",
		"wideLayout":             true,
		"showPercentChange":      false,
		"percentChangeColorMode": "standard",
	}
}

// table shows an instant query's series as rows, the value column renamed and the time hidden.
func table(title, description, valueName string, t *Target) *Panel {
	return &Panel{Type: "table", Title: title, Description: description, Targets: []*Target{t},
		Transforms: []*Transform{{ID: "organize", Options: map[string]any{
			"excludeByName": map[string]bool{"Time": true},
			"renameByName":  map[string]string{"Value": valueName},
		}}}}
}
