// Package result is the result model of a run: what an analysis found (requests, latency,
// checks, counters, rates, gauges, groups, Trends, workloads, node load, runner use, custom
// queries), the per-interval data a later comparison needs, and the comparison and objectives'
// outcomes. It is what results.json holds and what the experiment's status is mapped from
// (Status, FromStatus).
//
// It is a leaf: it imports only the API types and the standard library, so every consumer
// (reports, sweeps, dashboards, history, the kubectl plugin, the analyzer) imports it without
// pulling in the Prometheus readers (internal/analysis) or the statistics (internal/judge).
package result
