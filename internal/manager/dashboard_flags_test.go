package manager

import (
	"flag"
	"testing"

	"github.com/perfexp/perfexp/internal/analyzer"
)

// The dashboard flags: off by default; the sidecar's label as key=value; a label without '='
// has an empty value, and one without a key is refused.
func TestDashboardFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    analyzer.GrafanaDashboards
		wantErr bool
	}{
		{name: "defaults", want: analyzer.GrafanaDashboards{Folder: "perfexp"}},
		{name: "kube-prometheus-stack", args: []string{"--grafana-dashboards", "--grafana-dashboard-namespace=monitoring",
			"--grafana-dashboard-label=grafana_dashboard=1", "--grafana-dashboard-folder-annotation=grafana_folder",
			"--grafana-dashboard-folder=Performance", "--grafana-url=https://grafana.example.com/"},
			want: analyzer.GrafanaDashboards{Enabled: true, Namespace: "monitoring", LabelKey: "grafana_dashboard", LabelValue: "1",
				FolderAnnotation: "grafana_folder", Folder: "Performance", BaseURL: "https://grafana.example.com/"}},
		{name: "label without a value", args: []string{"--grafana-dashboard-label=team-dashboards"},
			want: analyzer.GrafanaDashboards{LabelKey: "team-dashboards", Folder: "perfexp"}},
		{name: "label without a key", args: []string{"--grafana-dashboard-label==1"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o Options
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			o.BindFlags(fs)
			err := fs.Parse(tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parse error %v, want error %v", err, tt.wantErr)
			}
			if err == nil && o.Dashboards != tt.want {
				t.Errorf("dashboards %+v, want %+v", o.Dashboards, tt.want)
			}
		})
	}
}
