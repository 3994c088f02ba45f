// Package judge decides what a run's results mean: whether they are valid, how they compare
// with a baseline, whether the objectives are met, and the verdict. It also holds the
// statistics those decisions rest on and the leak and change-point detectors.
//
// It is pure: no Prometheus, no client-go, no controller-runtime. Its input is the result
// model (internal/result) that the readers in internal/analysis fill, and every
// function here is tested without a cluster.
//
// Where each decision is made:
//   - verdict.go: the run's verdict (Verdict) and the ObjectivesMet condition.
//   - validity.go: whether the results can be trusted (error rates, drift), and whether dropped
//     iterations were the load generator's (Invalid) or the system's (Saturated, compared).
//   - objectives.go: each objective's outcome, absolute and relative to the baseline.
//   - compare.go: a single run against a single baseline run (block bootstrap per row);
//     rows.go lists the rows, baseline.go refuses a baseline that cannot be compared with.
//   - runs.go: repeated runs against repeated baseline runs (CompareRuns, AdjustArms).
//   - compare_custom.go, compare_script.go, compare_workloads.go: the rows of checks, custom
//     metrics, Counters, iterations, and workloads' CPU and memory.
//   - effect.go: an effect's interval against the thresholds: Regressed, Improved, no
//     meaningful change, or Inconclusive (decide).
//   - noise.go: the between-run noise a single-run interval adds (a calibration, or the
//     assumed default), and the widening for bounded biases.
//   - paired.go: a sweep's runs paired within their blocks, the residual pooled over its arms.
//   - robust.go: Huber's M-estimate of a blocked design's two-way table (arm + block), from
//     which the paired comparison draws its change and noise.
//   - sequential.go: what each look of a sequential sweep spends of the error rate.
//   - capacity.go: a capacity search's moves (bracket by doubling, bisect) and whether a probe's
//     objectives held over its runs; bisect.go: a performance bisect's next set of services
//     and what a step's comparison means for it.
//   - multiplicity.go: Holm's adjustment across the primary metrics and the headline change;
//     secondary.go: Benjamini-Hochberg across the other rows.
//   - guards.go: the bounds a busier node or CPU throttling widen a single-run interval by, and
//     the saturated node that withdraws its claims.
//   - leak.go: the memory-leak verdict (trend, level shift, Holm across pods); changepoint.go:
//     change points of a history and the correction across its series; changepoint_signif.go:
//     their selection-valid, drift-aware significance.
//   - bootstrap.go: the moving-block bootstrap the single-run comparison resamples with.
package judge
