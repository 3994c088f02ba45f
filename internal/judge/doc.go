// Package judge decides what a run's results mean: whether they are valid, how they compare
// with a baseline, whether the objectives are met, and the verdict.
//
// It is pure: no Prometheus, no client-go, no controller-runtime. Its input is the result
// model (internal/result) that the readers in internal/analysis fill, and every
// function here is tested without a cluster. Beside it, each pure as well:
//   - stats: the estimators and boundaries the comparisons rest on, with no knowledge of
//     this package's types (alpha spending, group-sequential levels, Huber's fit, Holm and
//     Benjamini-Hochberg);
//   - history: change points of a history, and the memory-leak verdict of a soak;
//   - search: a capacity search's moves and a performance bisect's steps.
//
// The arrows point down: history and search may import judge and stats, judge imports stats
// only, stats imports nothing of perfexp's.
//
// Where each decision is made:
//   - verdict.go: the run's verdict (Verdict) and the ObjectivesMet condition.
//   - validity.go: whether the results can be trusted (error rates, drift), and whether dropped
//     iterations were the load generator's (Invalid) or the system's (Saturated, compared).
//   - objectives.go: each objective's outcome, absolute and relative to the baseline.
//   - compare.go: a single run against a single baseline run (block bootstrap per row);
//     rows.go lists the rows, baseline.go refuses a baseline that cannot be compared with.
//   - runs.go: repeated runs against repeated baseline runs (CompareRuns, AdjustArms).
//   - compare_custom.go, compare_script.go, compare_workloads.go, compare_query.go: the rows of
//     checks, custom metrics, Counters, iterations, workloads' CPU and memory, and custom
//     queries.
//   - primary.go: which rows spec.analysis.primaryMetrics names, the direction each is judged
//     in (TwoSided included), and what a single run says of a quantity measured once per run.
//   - effect.go: an effect's interval against the thresholds: Regressed, Improved, no
//     meaningful change, or Inconclusive (decide).
//   - noise.go: the between-run noise a single-run interval adds (a calibration, or the
//     assumed default), and the widening for bounded biases; noise_history.go: that noise
//     learned from a history's newest segment.
//   - paired.go: a sweep's runs paired within their blocks, the residual pooled over its arms,
//     and the two-way table Huber's fit (stats.FitHuber) draws its change and noise from; an
//     arm noisier than the rest judged by its own; agreement.go: a calibration combined with
//     the runs' own estimate as a floor.
//   - stopping.go: which arms a look of a sequential sweep settles (DecideArms); what each
//     look spends of the error rate is stats.Look.
//   - multiplicity.go: Holm's adjustment across the primary metrics and the headline change;
//     secondary.go: Benjamini-Hochberg across the other rows.
//   - guards.go: the bounds a busier node or CPU throttling widen a single-run interval by, and
//     the saturated node that withdraws its claims.
//   - gate.go: whether a CI gate fails on the comparison.
//   - bootstrap.go: the moving-block bootstrap the single-run comparison resamples with (it
//     builds this package's effects, so it stays beside them).
package judge
