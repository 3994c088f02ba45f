package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis"
)

// The dashboard is plain Grafana dashboard JSON written with maps: no Grafana SDK can be had
// here, and the model needed is small. It is imported into Grafana by hand or by a dashboard
// provisioner; its time range is the run's window and its testid variable selects the run.

type panel map[string]any

// Keys of Grafana's dashboard model that panels, targets and the datasource reference share.
const (
	keyType       = "type"
	keyDatasource = "datasource"
)

// Dashboard renders a Grafana dashboard for the run: throughput, latency percentiles (from the
// native histograms, merged across runners), error rate, and the CPU and memory of every
// reported workload.
func Dashboard(r *analysis.Result) ([]byte, error) {
	ds := map[string]any{keyType: "prometheus", "uid": "${datasource}"}
	tid := `testid="$testid"`
	var panels []panel
	y := 0
	add := func(title, unit string, targets ...map[string]any) {
		for i, t := range targets {
			t["refId"] = string(rune('A' + i%26))
			if i >= 26 {
				t["refId"] = fmt.Sprintf("A%d", i)
			}
			t[keyDatasource] = ds
		}
		p := panel{
			"id": len(panels) + 1, keyType: "timeseries", "title": title, keyDatasource: ds,
			"gridPos":     map[string]int{"h": 8, "w": 12, "x": 12 * (len(panels) % 2), "y": y},
			"fieldConfig": map[string]any{"defaults": map[string]any{"unit": unit}, "overrides": []any{}},
			"targets":     targets,
		}
		if len(panels)%2 == 1 {
			y += 8
		}
		panels = append(panels, p)
	}
	target := func(expr, legend string) map[string]any {
		return map[string]any{"expr": expr, "legendFormat": legend, "range": true}
	}
	add("Requests per second", "reqps",
		target(fmt.Sprintf(`sum by (scenario) (rate(k6_http_reqs_total{%s}[$__rate_interval]))`, tid), "{{scenario}}"))
	add("Error rate", "percent",
		target(fmt.Sprintf(`100 * sum by (scenario) (rate(k6_http_reqs_total{%s,expected_response="false"}[$__rate_interval])) / sum by (scenario) (rate(k6_http_reqs_total{%s}[$__rate_interval]))`, tid, tid), "{{scenario}}"))
	qs := []string{"0.5", "0.95", "0.99"}
	quantiles := make([]map[string]any, 0, len(qs))
	for _, q := range qs {
		quantiles = append(quantiles, target(fmt.Sprintf(`histogram_quantile(%s, sum by (scenario) (rate(k6_http_req_duration_seconds{%s}[$__rate_interval])))`, q, tid), "{{scenario}} p"+strings.TrimPrefix(q, "0.")+pad(q)))
	}
	add("Response time percentiles", "s", quantiles...)
	add("p95 by request name", "s",
		target(fmt.Sprintf(`histogram_quantile(0.95, sum by (scenario, name) (rate(k6_http_req_duration_seconds{%s}[$__rate_interval])))`, tid), "{{scenario}} {{name}}"))
	cpu := make([]map[string]any, 0, len(r.Workloads))
	mem := make([]map[string]any, 0, len(r.Workloads))
	for _, w := range r.Workloads {
		sel := fmt.Sprintf(`%s,container!="",container!="POD",namespace=%s,pod=~%s`, analysis.DefaultCAdvisorMatchers,
			strconv.Quote(w.Namespace), strconv.Quote(analysis.PodPattern(perfexpv1alpha1.WorkloadKind(w.Kind), w.Name)))
		legend := w.Namespace + "/" + w.Name
		cpu = append(cpu, target(fmt.Sprintf(`sum(rate(container_cpu_usage_seconds_total{%s}[$__rate_interval]))`, sel), legend))
		mem = append(mem, target(fmt.Sprintf(`sum(container_memory_working_set_bytes{%s})`, sel), legend))
	}
	if len(cpu) > 0 {
		add("CPU (cores)", "none", cpu...)
		add("Memory working set", "bytes", mem...)
	}
	uid := "perfexp-" + r.TestID
	if len(uid) > 40 {
		uid = uid[:40]
	}
	option := map[string]any{"text": r.TestID, "value": r.TestID, "selected": true}
	d := map[string]any{
		"title":         fmt.Sprintf("perfexp %s/%s", r.Namespace, r.Experiment),
		"uid":           uid,
		"tags":          []string{"perfexp"},
		"schemaVersion": 39,
		"editable":      true,
		"time":          map[string]string{"from": r.Window.Start.UTC().Format(time.RFC3339), "to": r.Window.End.UTC().Format(time.RFC3339)},
		"templating": map[string]any{"list": []any{
			map[string]any{"name": "datasource", "label": "Prometheus", keyType: "datasource", "query": "prometheus"},
			map[string]any{"name": "testid", "label": "Test ID", keyType: "custom", "query": r.TestID, "current": option, "options": []any{option}},
		}},
		"panels": panels,
	}
	return json.MarshalIndent(d, "", "  ")
}

func pad(q string) string {
	if q == "0.5" {
		return "0"
	}
	return ""
}
