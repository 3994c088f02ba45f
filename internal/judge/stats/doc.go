// Package stats holds the estimators and boundaries the judge's comparisons rest on. It knows
// nothing of the judge's types: its inputs are numbers, slices and tables, so each method can
// be read and tested on its own.
//
// Where each piece lives:
//   - sequential.go: a sequential design's looks (Stopping, Look) and what each spends of the
//     error rate (Look.Alpha, Look.AlphaFor); gsboundary.go: the exact group-sequential
//     levels those looks are drawn at.
//   - robust.go: Huber's M-estimate of a blocked design's two-way table (arm + block), with
//     its small-sample covariance (FitHuber).
//   - multiplicity.go: Holm's and Benjamini-Hochberg's adjusted p-values; the judge decides
//     which rows form each family.
//   - moments.go: the sample variance, median and logs the estimators share; fdist.go: the F
//     distribution and the F-test of two variance estimates.
//   - level.go: the confidence every interval is drawn at; segment.go: the shortest segment
//     of a history, shared by the change-point search and the noise learned from a history.
package stats
