package dashboards_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	sdk "github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/perfexp/perfexp/internal/dashboards"
)

// Grafana's own dashboard schema, as the Go types Grafana generates from it (the foundation
// SDK), reads every dashboard perfexp writes: strictly, so an unknown or mistyped field of the
// dashboard, a panel, a target, a variable or the panel options of the registered panel types
// is an error, and then through the schema's own Validate. The dashboard linter of the Grafana
// ecosystem is not used because its module cannot be fetched here (docs/dashboards.md).
func TestDashboardsFollowGrafanasSchema(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	long := sampleExperiment()
	long.Run.TestID = strings.Repeat("a-very-long-experiment-name", 2) + "-4e5f6a7b"
	noBaseline := sampleExperiment()
	noBaseline.Baseline, noBaseline.Workloads = nil, nil
	for name, d := range map[string]*dashboards.Dashboard{
		"experiment":      dashboards.Experiment(sampleExperiment()),
		"experiment-long": dashboards.Experiment(long),
		"experiment-only": dashboards.Experiment(noBaseline),
		"overview":        dashboards.Overview(),
		"sweep":           dashboards.Sweep(),
	} {
		t.Run(name, func(t *testing.T) {
			raw, err := d.JSON()
			if err != nil {
				t.Fatal(err)
			}
			var got sdk.Dashboard //nolint:staticcheck // perfexp writes the classic dashboard JSON the provisioning sidecar loads; v2 is another resource format
			if err := problems(got.UnmarshalJSONStrict(raw)); err != nil {
				t.Fatalf("Grafana's schema refuses the dashboard: %v", err)
			}
			if err := problems(got.Validate()); err != nil {
				t.Fatalf("Grafana's schema finds the dashboard invalid: %v", err)
			}
			if len(got.Panels) != len(d.Panels) {
				t.Errorf("the schema read %d panels of %d", len(got.Panels), len(d.Panels))
			}
		})
	}
}

// problems is err unless it is the SDK's empty list of build errors, which its generated code
// returns as a non-nil error when it found nothing.
func problems(err error) error {
	var errs cog.BuildErrors
	if errors.As(err, &errs) && len(errs) == 0 {
		return nil
	}
	return err
}

// The schema check bites: a misspelt field of a target, a panel's option of the wrong type and
// a missing required option are each refused.
func TestGrafanasSchemaRefusesFaults(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	// panel 0 of an experiment's dashboard is a stat panel with a Prometheus target.
	for name, spoil := range map[string]func(panel map[string]any){
		"target field misspelt": func(panel map[string]any) {
			panel["targets"].([]any)[0].(map[string]any)["exper"] = "up"
		},
		"option of the wrong type": func(panel map[string]any) {
			panel["options"].(map[string]any)["wideLayout"] = "yes"
		},
		"required option missing": func(panel map[string]any) {
			delete(panel["options"].(map[string]any), "colorMode")
		},
	} {
		t.Run(name, func(t *testing.T) {
			raw, err := dashboards.Experiment(sampleExperiment()).JSON()
			if err != nil {
				t.Fatal(err)
			}
			var generic map[string]any
			if err := json.Unmarshal(raw, &generic); err != nil {
				t.Fatal(err)
			}
			spoil(generic["panels"].([]any)[0].(map[string]any))
			if raw, err = json.Marshal(generic); err != nil {
				t.Fatal(err)
			}
			var got sdk.Dashboard //nolint:staticcheck // perfexp writes the classic dashboard JSON the provisioning sidecar loads; v2 is another resource format
			if problems(got.UnmarshalJSONStrict(raw)) == nil {
				t.Error("Grafana's schema accepted the spoilt dashboard")
			}
		})
	}
}
