package dashboards

import "fmt"

// k6's remote write has no classic (bucketed) histograms: without
// K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true it writes each Trend as gauges of its trend
// stats instead, k6_http_req_duration_p95 and so on (perfexp's runner asks for p(50), p(75),
// p(90), p(95), p(99), avg, min, max, count and sum: load.DefaultTrendStats), in seconds. Every
// latency panel reads the native histograms first and these gauges where there are none.
const trendStatPrefix = "k6_http_req_duration_"

// trendStatNote tells the reader what the latency panels show without native histograms.
const trendStatNote = "Without native histograms (k6 run with K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=false) it reads k6's trend-stat gauges instead: each runner's statistic over its run so far, the largest among runners (an upper bound when several ran); a warm-up cannot be taken out of them."

// trendStatRun is a trend stat's value at the end of the run: the largest among the runners'
// last values, for a Prometheus that holds no native histograms.
func trendStatRun(stat, tid, off string) string {
	return fmt.Sprintf("max(last_over_time(%s%s{%s}[$__range]%s))", trendStatPrefix, stat, tid, off)
}

// addK6Panels adds the panels users know from the k6 dashboards: virtual users, iterations and
// checks, from series k6 writes whatever its histogram setting.
func addK6Panels(l *layout) {
	const tid = `testid="$testid"`
	l.add(8, 8, timeseries("Virtual users", "short",
		"Active virtual users summed over every k6 runner (k6_vus), and the most the runners allocated (k6_vus_max).",
		rangeQ(`sum(k6_vus{`+tid+`})`, "active"), rangeQ(`sum(k6_vus_max{`+tid+`})`, "allocated")))
	l.add(8, 8, timeseries("Iterations per second by scenario", "short",
		"Iterations of the script's function that completed per second, over every k6 runner (k6_iterations_total).",
		rangeQ(`sum by (scenario) (rate(k6_iterations_total{`+tid+`}[$__rate_interval]))`, "{{scenario}}")))
	l.add(8, 8, timeseries("Checks passed by check", "percent",
		"The share of each check's runs that passed, since each runner began (k6_checks_rate); with several runners the lowest of them. 100 while none failed.",
		rangeQ(`100 * min by (check) (k6_checks_rate{`+tid+`})`, "{{check}}")))
}
