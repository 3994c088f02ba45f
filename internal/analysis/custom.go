package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// TemplateData is what a custom query's template may use. Namespace and TestID are valid label
// values (DNS names) and need no escaping; times are RFC 3339; Window is a PromQL range.
type TemplateData struct {
	// Namespace is the target namespace.
	Namespace string
	// TestID is the testid tag of the run's k6 samples.
	TestID string
	// Start is the window's start (the warm-up included), End its end.
	Start, End string
	// WarmUpEnd is where measured results begin (the start when there was no warm-up).
	WarmUpEnd string
	// Window is the measured window's length as a PromQL range, e.g. "1800s": a query such as
	// avg_over_time(x[{{.Window}}]), evaluated at the end, covers the measured window.
	Window string
}

func templateData(namespace, testID string, start, measuredStart, end time.Time) TemplateData {
	return TemplateData{
		Namespace: namespace,
		TestID:    testID,
		Start:     start.UTC().Format(time.RFC3339),
		End:       end.UTC().Format(time.RFC3339),
		WarmUpEnd: measuredStart.UTC().Format(time.RFC3339),
		Window:    promDuration(end.Sub(measuredStart)),
	}
}

// runQueries evaluates the custom queries at the given time, each bound to scope (BindQuery).
// A query Prometheus refuses, or one that reads outside scope, is reported in its result; an
// unavailable Prometheus is returned as an error.
func runQueries(ctx context.Context, q Querier, specs []perfexpv1alpha1.CustomQuery, data TemplateData, scope QueryScope, at time.Time) ([]result.QueryResult, error) {
	out := make([]result.QueryResult, 0, len(specs))
	for _, spec := range specs {
		qr := result.QueryResult{Name: spec.Name, Description: spec.Description, Unit: spec.Unit}
		rendered, err := renderBound(spec.Query, data, scope)
		if err != nil {
			qr.Query, qr.Error = spec.Query, err.Error()
			out = append(out, qr)
			continue
		}
		// The query as Prometheus evaluated it: with the namespace matchers BindQuery added.
		qr.Query = rendered
		qctx, cancel := context.WithTimeout(ctx, queryTimeout)
		v, err := customInstant(qctx, q, rendered, at)
		cancel()
		var qe *QueryError
		var limit *LimitError
		switch {
		case errors.As(err, &qe):
			qr.Error = qe.Err.Error()
		case errors.As(err, &limit):
			// The backend's limit refuses this query, not the analysis: the others stand.
			qr.Error = limit.Error()
		case err != nil && ctx.Err() == nil && timedOut(err):
			// Prometheus answered the other reads; this query is too slow for it. Retrying the
			// whole analysis until its timeout (hours or days) would not make it faster.
			qr.Error = fmt.Sprintf("the query timed out (%s for one query); it is not retried: narrow its selectors or its range", promDuration(queryTimeout))
		case err != nil:
			return nil, err
		default:
			fillQueryResult(&qr, v)
			if vec, ok := v.(model.Vector); ok && len(vec) == 0 {
				qr.Note = emptyNote(rendered, data)
			}
		}
		out = append(out, qr)
	}
	return out, nil
}

// timedOut says whether a custom query's error is its own timeout: Prometheus' (errorType
// timeout or canceled once the query's timeout parameter passed, which Prometheus sends with
// status 503 and client_golang reports as a server error with the body in Detail) or the
// query's deadline here.
func timedOut(err error) bool {
	var apiErr *promv1.Error
	if errors.As(err, &apiErr) {
		t := apiErr.Type
		if t == promv1.ErrServer {
			var body struct {
				ErrorType promv1.ErrorType `json:"errorType"`
			}
			if json.Unmarshal([]byte(apiErr.Detail), &body) == nil {
				t = body.ErrorType
			}
		}
		if t == promv1.ErrTimeout || t == promv1.ErrCanceled {
			return true
		}
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// renderBound fills in a custom query's placeholders and binds it to scope.
func renderBound(query string, data TemplateData, scope QueryScope) (string, error) {
	rendered, err := RenderQuery(query, data)
	if err != nil {
		return "", err
	}
	return BindQuery(rendered, scope)
}

// rangeFunctions need two samples of a series inside their range to return anything for it.
var rangeFunctions = []string{"rate(", "irate(", "increase(", "delta(", "idelta(", "deriv("}

// emptyNote says that a query returned no series, when and over which window it was evaluated,
// and, for a query taking a rate over {{.Window}}, the likely cause: a window too short to hold
// two samples of the series (a 30 s run with cAdvisor's samples 10-15 s apart may hold one).
func emptyNote(rendered string, data TemplateData) string {
	note := fmt.Sprintf("the query returned no series at %s, the end of the window [%s, %s] ({{.Window}} = %s)", data.End, data.WarmUpEnd, data.End, data.Window)
	if !strings.Contains(rendered, "["+data.Window) {
		return note
	}
	for _, f := range rangeFunctions {
		if strings.Contains(rendered, f) {
			return note + "; rate(), irate(), increase(), delta() and deriv() return a series only when it has two samples inside their range, which a window shorter than two scrape intervals may not hold: measure longer, or read the workload's CPU from analysis.observe, which falls back to the samples around the window"
		}
	}
	return note
}

// Bounds of what one custom query keeps in the results, so that a query returning thousands
// of series (by pod, by path) still leaves a report that fits its ConfigMap and results that
// reach the status and the history: the largest values are kept, the rest counted.
const (
	// MaxQuerySeriesKept is the most series of one custom query kept in the results.
	MaxQuerySeriesKept = 50
	// maxQueryLabels is the most labels kept per series, by name.
	maxQueryLabels = 32
	// maxQueryLabelValue is the most bytes kept of one label value.
	maxQueryLabelValue = 200
)

func fillQueryResult(qr *result.QueryResult, v model.Value) {
	switch val := v.(type) {
	case *model.Scalar:
		qr.Value = result.Num(float64(val.Value))
	case model.Vector:
		kept := largestFirst(val)
		if len(kept) > MaxQuerySeriesKept {
			qr.SeriesDropped = len(kept) - MaxQuerySeriesKept
			kept = kept[:MaxQuerySeriesKept]
		}
		for _, s := range kept {
			var value *float64
			if s.Histogram == nil {
				value = result.Num(float64(s.Value))
			}
			qr.Series = append(qr.Series, result.QuerySeries{Labels: keptLabels(s.Metric), Value: value})
		}
		sort.Slice(qr.Series, func(i, j int) bool {
			return fmt.Sprint(qr.Series[i].Labels) < fmt.Sprint(qr.Series[j].Labels)
		})
		if len(qr.Series) == 1 && qr.SeriesDropped == 0 {
			qr.Value = qr.Series[0].Value
		}
	case model.Matrix:
		qr.Error = "the query returns a range vector; reduce it to one value per series, e.g. with avg_over_time(...[{{.Window}}])"
	default:
		qr.Error = fmt.Sprintf("the query returns a %s; a scalar or an instant vector is needed", v.Type())
	}
}

// largestFirst orders a vector's samples by value, largest first (histograms and NaN last),
// then by labels, so the series a capped result keeps do not depend on Prometheus' order.
func largestFirst(vec model.Vector) model.Vector {
	out := append(model.Vector(nil), vec...)
	rank := func(s *model.Sample) (float64, bool) {
		if s.Histogram != nil || math.IsNaN(float64(s.Value)) {
			return 0, false
		}
		return float64(s.Value), true
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, aok := rank(out[i])
		b, bok := rank(out[j])
		switch {
		case aok != bok:
			return aok
		case a != b:
			return a > b
		}
		return out[i].Metric.Before(out[j].Metric)
	})
	return out
}

// keptLabels is a series' labels as the results keep them: at most maxQueryLabels, each value
// at most maxQueryLabelValue bytes.
func keptLabels(m model.Metric) map[string]string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, string(k))
	}
	sort.Strings(names)
	if len(names) > maxQueryLabels {
		names = names[:maxQueryLabels]
	}
	labels := make(map[string]string, len(names))
	for _, k := range names {
		labels[k] = clip(string(m[model.LabelName(k)]), maxQueryLabelValue)
	}
	return labels
}
