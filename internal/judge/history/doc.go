// Package history finds what changed over time: change points in a history of comparable
// runs, and memory leaks within one soak. It is pure, like the judge beside it.
//
// Where each decision is made:
//   - changepoint.go: change points of a history (DetectChangePoints) and the
//     Benjamini-Hochberg correction across its series (DetectHistoryChangePoints);
//     changepoint_signif.go: their selection-valid, drift-aware significance.
//   - leak.go: the memory-leak verdict (trend, level shift, Holm across pods).
package history
