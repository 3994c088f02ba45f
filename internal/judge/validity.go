package judge

import (
	"fmt"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// DefaultMaxErrorRatePercent applies when spec.analysis.maxErrorRatePercent is unset.
const DefaultMaxErrorRatePercent = 5.0

// MaxErrorRate is the error rate, in percent, above which a scenario is invalid.
func MaxErrorRate(a perfexpv1alpha1.Analysis) float64 {
	if a.MaxErrorRatePercent == nil {
		return DefaultMaxErrorRatePercent
	}
	return a.MaxErrorRatePercent.AsApproximateFloat64()
}

// MarkInvalid makes the results invalid, for reason.
func MarkInvalid(r *result.Result, reason string) {
	r.Validity = perfexpv1alpha1.Invalid
	r.InvalidReasons = append(r.InvalidReasons, reason)
}

// Validity marks scenarios without data or over the error-rate limit invalid: fast errors
// are not fast responses, and a missing scenario is not a fast one.
func Validity(r *result.Result, maxErrPercent float64) {
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		var why string
		switch {
		case s.RequestStats.Requests == nil && s.Iterations != nil:
			why = fmt.Sprintf("scenario %s: no HTTP requests in Prometheus with testid=%s (its %d iterations reached it): perfexp measures k6's HTTP requests",
				s.Name, r.TestID, *s.Iterations)
		case s.RequestStats.Requests == nil:
			why = fmt.Sprintf("scenario %s: no k6 samples with testid=%s reached Prometheus", s.Name, r.TestID)
		case *s.RequestStats.Requests == 0:
			why = fmt.Sprintf("scenario %s: no requests in the measured window", s.Name)
		case s.ErrorPercent != nil && *s.ErrorPercent > maxErrPercent:
			why = fmt.Sprintf("scenario %s: %.2f%% of requests failed (%d of %d), above the maximum of %g%%",
				s.Name, *s.ErrorPercent, *s.Errors, *s.RequestStats.Requests, maxErrPercent)
		}
		// A request name can fail wholesale under a small share of the traffic and leave the
		// scenario's rate under the maximum: each name is held to the maximum too, once it has
		// enough errors for the rate to mean something.
		if why == "" {
			why = failingRequests(s, maxErrPercent)
		}
		if why == "" && s.DroppedPercent != nil && *s.DroppedPercent > MaxDroppedPercent {
			why = dropped(r, s)
		}
		if why != "" {
			s.Validity = perfexpv1alpha1.Invalid
			s.InvalidReason = why
			MarkInvalid(r, why)
		}
	}
}

// Drift marks the results invalid when the variant drifted during the run: the numbers
// are real, but not the variant's.
func Drift(r *result.Result, drifted string) {
	if drifted != "" {
		MarkInvalid(r, "the variant drifted during the run: "+drifted)
	}
}

// MaxDroppedPercent is the share of planned iterations k6 may drop before perfexp asks why
// (dropped): beyond it the declared load was not run, because either the load generator or the
// system under test could not keep up.
const MaxDroppedPercent = 1.0

// RunnerThrottledPercent is the share of its CPU periods a k6 pod may be throttled in before
// perfexp holds that k6 itself waited: a throttled runner sends its requests late and times them
// late, so its latencies hold its own wait, and iterations it dropped are its own.
const RunnerThrottledPercent = 10.0

// minRequestNameErrors is the fewest errors that make a request name's error rate count for
// validity: one failure in three requests of a rare name is not a broken run.
const minRequestNameErrors = 5

// failingRequests names the scenario's request names whose error rate is above the maximum.
func failingRequests(s *result.ScenarioResult, maxErrPercent float64) string {
	var bad []string
	for _, rr := range s.Requests {
		if rr.ErrorPercent == nil || rr.Errors == nil || rr.Requests == nil || *rr.Errors < minRequestNameErrors || *rr.ErrorPercent <= maxErrPercent {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s %.2f%% (%d of %d)", rr.Name, *rr.ErrorPercent, *rr.Errors, *rr.Requests))
	}
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf("scenario %s: requests failed above the maximum of %g%%: %s", s.Name, maxErrPercent, result.ShortList(bad, 5))
}

// dropped decides what a scenario that dropped more than MaxDroppedPercent of its planned
// iterations means. When the load generator fell behind (a k6 runner pod CPU-throttled) the run
// measured k6, not the system: the reason to make it Invalid is returned. Otherwise the system
// under test could not sustain the planned arrival rate (every VU was busy waiting for it): that
// is the finding, not a broken run, so the scenario stays Valid, is marked Saturated, and its
// rows are compared (the rate row then shows the throughput it did sustain).
func dropped(r *result.Result, s *result.ScenarioResult) string {
	var throttled []string
	for _, u := range r.Runners {
		if u.ThrottledPercent != nil && *u.ThrottledPercent >= RunnerThrottledPercent {
			throttled = append(throttled, fmt.Sprintf("%s (%.1f %% of its CPU periods)", u.Pod, *u.ThrottledPercent))
		}
	}
	if len(throttled) > 0 {
		return fmt.Sprintf("scenario %s: k6 dropped %d iterations, %.2f%% of those planned (above %g%%), and its runner pods were CPU-throttled (%s): the load generator, not the system under test, fell behind, so the load was not the one declared; give the runners more CPU or parallelism",
			s.Name, *s.DroppedIterations, *s.DroppedPercent, MaxDroppedPercent, strings.Join(throttled, ", "))
	}
	s.Saturated = true
	runners := "the k6 runner pods were not CPU-bound"
	if len(r.Runners) == 0 {
		runners = "the k6 runner pods' CPU was not measured (no cAdvisor series), so a runner that fell behind cannot be ruled out"
	}
	rate := ""
	if s.Rate != nil {
		rate = fmt.Sprintf("; it sustained %.4g requests/s", *s.Rate)
	}
	r.Notes = append(r.Notes, fmt.Sprintf("scenario %s saturated: k6 dropped %d iterations, %.2f%% of those planned, because every VU was busy waiting for the system under test (%s): the planned arrival rate was not sustained%s. The run is valid and compared: not keeping up with the load is the finding",
		s.Name, *s.DroppedIterations, *s.DroppedPercent, runners, rate))
	return ""
}
