package findings

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/aclements/go-moremath/mathx"

	"github.com/perfexp/perfexp/internal/result"
)

// The bounds of the warm-up findings.
const (
	// WarmUpRatio is how many times the measured window's p95 the warm-up's may be (or how
	// many times smaller) before the two are called far apart.
	WarmUpRatio = 1.5
	// ColdStartRatio is how many times its second half's p95 (or a workload's mean CPU) the
	// measured window's first interval may reach before a cold start is said not to have ended.
	ColdStartRatio = 1.5
	// ColdStartMinRequests is how many requests the first interval needs for its p95 to count.
	ColdStartMinRequests = 20
	// ColdStartMinCores is how far, in cores, a workload's first-interval CPU must also exceed
	// its second half's: an idle service going from 2 to 4 millicores is no cold start.
	ColdStartMinCores = 0.05
	// ColdStartP is the binomial p-value below which the first interval's share of requests
	// above its second half's p95 is more than chance (see aboveP): requests of one interval
	// are not independent, so it is kept small and the ratio above must hold as well.
	ColdStartP = 0.001
	// coldStartMinIntervals is the fewest intervals a window needs for a first and a second half.
	coldStartMinIntervals = 4
)

// warmUp sets the warm-up's latency beside the measured window's (what skipping the warm-up
// would have cost), then names a cold start that was still under way when the measured window
// began: its first interval's p95, or a workload's CPU, far above the window's second half.
// Each is a ratio of two figures with no interval of its own, stated as figures.
func warmUp(r *result.Result) []result.Finding {
	var out []result.Finding
	if w, m := r.WarmUp, r.Total.P95; w != nil && w.P95 != nil && m != nil && *w.P95 > 0 && *m > 0 {
		ratio := *w.P95 / *m
		var text string
		switch {
		case ratio >= WarmUpRatio:
			text = fmt.Sprintf("The warm-up's p95 was %.1f ms, %.1f× the measured window's %.1f ms: the warm-up absorbed a cold start the results would otherwise hold (it is excluded from them).", *w.P95, ratio, *m)
		case ratio <= 1/WarmUpRatio:
			text = fmt.Sprintf("The warm-up's p95 was %.1f ms, %.1f× faster than the measured window's %.1f ms (a warm-up runs its own VUs, often a lighter load).", *w.P95, 1/ratio, *m)
		default:
			text = fmt.Sprintf("The warm-up's p95 (%.1f ms) was within %g× of the measured window's (%.1f ms): no cold start showed in it, so skipping the warm-up would have changed the results little.", *w.P95, WarmUpRatio, *m)
		}
		out = append(out, result.Finding{Kind: result.FindingWarmUp, Row: "Summary", Text: text})
	}
	return append(out, coldStart(r)...)
}

// coldStart names a cold start the measured window still held: its first interval's p95 (all
// scenarios, successful requests) at ColdStartRatio or more of its second half's, and the
// workloads whose first-interval CPU was as far above their second half's mean.
func coldStart(r *result.Result) []result.Finding {
	d := r.Intervals
	if d == nil || d.StepSeconds <= 0 {
		return nil
	}
	first := (time.Duration(d.StepSeconds) * time.Second).String()
	fix := "a warm-up (spec.load.warmUp) keeps it out of the results"
	if r.WarmUp != nil || r.Window.WarmUpEnd != nil {
		fix = "a longer warm-up (spec.load.warmUp.duration) keeps it out of the results"
	}
	var out []result.Finding
	if s := d.Find(result.IntervalKey{Scenario: result.AllScenarios}); s != nil && len(s.Requests) >= coldStartMinIntervals {
		n := len(s.Requests)
		h0, rest := s.Histogram(0), result.NewHistogram()
		for i := n / 2; i < n; i++ {
			rest.Add(s.Histogram(i))
		}
		q0, ok0 := quantile(h0, 0.95)
		qr, okr := quantile(rest, 0.95)
		if ok0 && okr && qr > 0 && h0.Count >= ColdStartMinRequests && q0 >= ColdStartRatio*qr && aboveP(h0, qr) < ColdStartP {
			out = append(out, result.Finding{Kind: result.FindingWarmUp, Row: "Timeline",
				Text: fmt.Sprintf("A cold start had not ended when the measured window began: its first %s had p95 %.1f ms, %.1f× the %.1f ms of its second half; %s.", first, 1000*q0, q0/qr, 1000*qr, fix)})
		}
	}
	var hot []string
	for _, w := range d.Workloads {
		n := len(w.CPU)
		if n < coldStartMinIntervals {
			continue
		}
		settled := 0.0
		for _, v := range w.CPU[n/2:] {
			settled += v
		}
		settled /= float64(n - n/2)
		if c0 := w.CPU[0]; settled > 0 && c0 >= ColdStartRatio*settled && c0-settled >= ColdStartMinCores {
			hot = append(hot, fmt.Sprintf("%s/%s %.2f cores against %.2f (%.1f×)", w.Namespace, w.Name, c0, settled, c0/settled))
		}
	}
	if len(hot) > 0 {
		out = append(out, result.Finding{Kind: result.FindingWarmUp, Row: "Services: CPU",
			Text: fmt.Sprintf("CPU in the measured window's first %s stood far above its second half's mean: %s, a cold start (JIT, caches, pools) still under way; %s.", first, strings.Join(hot, "; "), fix)})
	}
	return out
}

// aboveP is the one-sided binomial p-value of the first interval's requests above the second
// half's p95 (qr): were the first interval like the rest, each would be above it with
// probability 0.05. P(X >= k) for X ~ Binomial(n, 0.05) is the regularized incomplete beta
// I_0.05(k, n-k+1).
func aboveP(h *result.Histogram, qr float64) float64 {
	above := 0.0
	h.EachBucket(func(lower, upper, count float64) {
		switch {
		case lower >= qr:
			above += count
		case upper > qr && lower > 0:
			above += count * math.Log(upper/qr) / math.Log(upper/lower)
		case upper > qr:
			above += count * (upper - qr) / (upper - lower)
		}
	})
	k, n := math.Floor(above), math.Round(h.Count)
	if k < 1 {
		return 1
	}
	return mathx.BetaInc(0.05, k, n-k+1)
}

func quantile(h *result.Histogram, q float64) (float64, bool) {
	if h == nil || h.Count == 0 {
		return 0, false
	}
	return h.Quantile(q)
}
