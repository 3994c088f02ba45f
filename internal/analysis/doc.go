// Package analysis reads an experiment's recorded window from Prometheus into results (the
// result model of internal/result): exact request counts, latency percentiles merged
// across parallel k6 runners, workload CPU and memory, custom queries, time slices, and the
// per-interval data a comparison resamples. Analyze reads everything, then hands the results
// to internal/judge, which decides validity, the comparison with a baseline run, objectives
// and the verdict.
//
// It is pure: it talks to Prometheus through the Querier interface (satisfied by client_golang's
// promv1.API) and never to Kubernetes. Everything the cluster knows (the window, the containers'
// resources, the baseline's results) arrives in an Input.
//
// Exactness rules, each verified against a real Prometheus in the tests (Debian's 2.42 and, with
// `make test-prometheus3`, Prometheus 3, whose left-open ranges and lookback they also hold for):
//   - Counters are read as their values at the window's edges (max_over_time over a range that
//     starts before the run), never with increase(), which extrapolates at the edges.
//   - k6 writes a series only when it has new samples, so a request name seen only early in a
//     run has its last sample long before the window's end; instant queries (5 minutes of
//     lookback) miss it. Histograms are therefore read with a subquery that finds each series'
//     last sample wherever it is (see edges.go).
//   - Native histograms are summed and subtracted bucket by bucket in Go: Prometheus 2.42
//     silently returns a float 0 for histogram subtraction and for last_over_time.
//   - Counter resets (a restarted runner) are found with resets() and those series are read
//     sample by sample.
//   - The number of queries depends on the number of edges (window, slices), never on the number
//     of request names or workloads: results are grouped in PromQL and split in Go.
package analysis
