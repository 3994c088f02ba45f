package dashboards

// The overview and sweep dashboards are static: they read perfexp's own metrics
// (docs/metrics.md) and the k6 samples, select with variables, and are shipped as files
// (config/grafana/) and by the Helm chart.

// Overview is the dashboard of the environment's queues and recent experiments.
func Overview() *Dashboard {
	var l layout
	queue := `queue=~"$queue"`
	l.add(12, 8, timeseries("Experiments waiting per queue", "short",
		"Experiments Pending or Queued in each queue (perfexp_queue_length).",
		rangeQ(`max by (queue) (perfexp_queue_length{`+queue+`})`, "{{queue}}")))
	l.add(12, 8, timeseries("Experiments by phase", "short",
		"Experiments the operator knows, by phase; ended ones count until they are deleted (perfexp_experiments).",
		rangeQ(`sum by (phase) (perfexp_experiments{`+queue+`})`, "{{phase}}")))
	l.add(24, 8, table("Experiments that ran", "Every experiment that held the environment in the time range: its last phase seen while it held it (perfexp_experiment_info).", "held",
		tableQ(`max by (namespace, name, testid, variant, queue) (last_over_time(perfexp_experiment_info{`+queue+`}[$__range]))`)))
	l.add(24, 8, table("Verdicts", "Experiments that ended in the time range and still exist, with their verdict (perfexp_experiment_verdict).", "ended",
		tableQ(`max by (namespace, name, testid, variant, phase, verdict, queue) (last_over_time(perfexp_experiment_verdict{`+queue+`}[$__range]))`)))
	l.add(8, 6, stat("Queue wait p90", "s", "90th percentile of the time experiments waited for the environment in the time range.",
		instantQ(`histogram_quantile(0.9, sum by (queue, le) (increase(perfexp_queue_wait_seconds_bucket{`+queue+`}[$__range])))`, "{{queue}}")))
	l.add(8, 6, stat("Restores", "short", "Restores finished in the time range; failed ones left the environment patched.",
		instantQ(`sum by (queue, result) (round(increase(perfexp_restores_total{`+queue+`}[$__range])))`, "{{queue}} {{result}}")))
	l.add(8, 6, stat("Time patched after the load", "s", "Mean time from the load's end until the environment was restored, in the time range.",
		instantQ(`sum by (queue) (increase(perfexp_restore_duration_seconds_sum{`+queue+`}[$__range])) / sum by (queue) (increase(perfexp_restore_duration_seconds_count{`+queue+`}[$__range]))`, "{{queue}}")))
	return &Dashboard{
		UID: "perfexp-overview", Title: "perfexp overview",
		Description: "Queues, experiments and verdicts of perfexp, from the operator's own metrics.",
		Tags:        []string{tagPerfexp}, SchemaVersion: 39, Editable: true, Refresh: "1m",
		Time: TimeRange{From: "now-24h", To: "now"},
		Templating: Templating{List: []*Variable{
			datasourceVariable(),
			{Name: "queue", Label: "Queue", Type: typeQuery, Datasource: promDS(),
				Query: "label_values(perfexp_experiments, queue)", Multi: true, IncludeAll: true, Refresh: 2, Sort: 1,
				Current: &Option{Text: "All", Value: "$__all", Selected: true}, Description: "The queues (environments) to show."},
		}},
		Annotations: Annotations{List: []*Annotation{phaseAnnotation(`perfexp_experiment_info{` + queue + `}`)}},
		Panels:      l.panels,
	}
}

// Sweep is the dashboard of one sweep: every arm's runs side by side.
func Sweep() *Dashboard {
	var l layout
	// arm joins a run's k6 samples (by test id) to its sweep arm.
	const arm = ` * on (testid) group_left (arm, repeat) max by (testid, arm, repeat) (last_over_time(perfexp_sweep_run_info{namespace="$namespace",sweep="$sweep"}[$__range]))`
	const tid = `testid=~"$testid"`
	l.add(24, 8, table("p95 of every run, by arm", "The 95th percentile of each run's load in the time range, from its merged native histograms. increase() starts at each runner's first sample, so the first push (k6's default 5 s) and a warm-up are in or out as the time range has them; the sweep report's numbers are exact. "+trendStatNote, "p95 (s)",
		tableQ(`(histogram_quantile(0.95, sum by (testid) (increase(k6_http_req_duration_seconds{`+tid+`}[$__range]))) or max by (testid) (last_over_time(`+trendStatPrefix+`p95{`+tid+`}[$__range])))`+arm)))
	l.add(12, 8, timeseries("p95 latency per run", "s", "Arms run one after the other (interleaved); each curve is one run. "+trendStatNote,
		rangeQ(`(histogram_quantile(0.95, sum by (testid) (rate(k6_http_req_duration_seconds{`+tid+`}[$__rate_interval]))) or max by (testid) (`+trendStatPrefix+`p95{`+tid+`}))`+arm, "{{arm}} #{{repeat}}")))
	l.add(12, 8, timeseries("Requests per second per run", "reqps", "",
		rangeQ(`sum by (testid) (rate(k6_http_reqs_total{`+tid+`}[$__rate_interval]))`+arm, "{{arm}} #{{repeat}}")))
	l.add(12, 8, timeseries("Error rate per run", "percent", "Requests k6 did not expect, in %; 0 while all succeed.",
		rangeQ(`(100 * (sum by (testid) (rate(k6_http_reqs_total{`+tid+`,`+k6Failed+`}[$__rate_interval])) or 0 * sum by (testid) (rate(k6_http_reqs_total{`+tid+`}[$__rate_interval]))) / sum by (testid) (rate(k6_http_reqs_total{`+tid+`}[$__rate_interval])))`+arm, "{{arm}} #{{repeat}}")))
	l.add(12, 8, table("Verdicts", "The verdict of each of the sweep's experiments that ended (perfexp_experiment_verdict).", "ended",
		tableQ(`max by (name, testid, variant, phase, verdict) (last_over_time(perfexp_experiment_verdict{namespace="$namespace",`+tid+`}[$__range]))`)))
	return &Dashboard{
		UID: "perfexp-sweep", Title: "perfexp sweep",
		Description: "The arms of one PerfSweep: choose its namespace and name.",
		Tags:        []string{tagPerfexp}, SchemaVersion: 39, Editable: true,
		Time: TimeRange{From: "now-24h", To: "now"},
		Templating: Templating{List: []*Variable{
			datasourceVariable(),
			{Name: "namespace", Label: "Namespace", Type: typeQuery, Datasource: promDS(), Refresh: 2, Sort: 1,
				Query: "label_values(perfexp_sweep_run_info, namespace)", Description: "The sweep's namespace."},
			{Name: "sweep", Label: "Sweep", Type: typeQuery, Datasource: promDS(), Refresh: 2, Sort: 1,
				Query: `label_values(perfexp_sweep_run_info{namespace="$namespace"}, sweep)`, Description: "The PerfSweep."},
			{Name: "testid", Label: "Runs", Type: typeQuery, Datasource: promDS(), Refresh: 2, Sort: 1, Multi: true, IncludeAll: true,
				Current: &Option{Text: "All", Value: "$__all", Selected: true},
				Query:   `label_values(perfexp_sweep_run_info{namespace="$namespace",sweep="$sweep"}, testid)`, Description: "The sweep's runs (their k6 test ids)."},
		}},
		Annotations: Annotations{List: []*Annotation{phaseAnnotation(`perfexp_experiment_info{namespace="$namespace",` + tid + `}`)}},
		Panels:      l.panels,
	}
}
