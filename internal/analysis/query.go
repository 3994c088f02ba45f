package analysis

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/text"
)

// Querier is the part of client_golang's promv1.API that analysis uses.
type Querier interface {
	Query(ctx context.Context, query string, ts time.Time, opts ...promv1.Option) (model.Value, promv1.Warnings, error)
	QueryRange(ctx context.Context, query string, r promv1.Range, opts ...promv1.Option) (model.Value, promv1.Warnings, error)
	Series(ctx context.Context, matches []string, startTime, endTime time.Time, opts ...promv1.Option) ([]model.LabelSet, promv1.Warnings, error)
}

// CountingQuerier counts the queries it passes on, for benchmarks and for the report, and
// hands the answers' warnings to the BackendSignals of the query's context.
type CountingQuerier struct {
	Querier
	n atomic.Int64
}

// Query counts and forwards an instant query.
func (c *CountingQuerier) Query(ctx context.Context, query string, ts time.Time, opts ...promv1.Option) (model.Value, promv1.Warnings, error) {
	c.n.Add(1)
	v, w, err := c.Querier.Query(ctx, query, ts, opts...)
	signalsFrom(ctx).add(w)
	return v, w, err
}

// QueryRange counts and forwards a range query.
func (c *CountingQuerier) QueryRange(ctx context.Context, query string, r promv1.Range, opts ...promv1.Option) (model.Value, promv1.Warnings, error) {
	c.n.Add(1)
	v, w, err := c.Querier.QueryRange(ctx, query, r, opts...)
	signalsFrom(ctx).add(w)
	return v, w, err
}

// Series counts and forwards a series lookup.
func (c *CountingQuerier) Series(ctx context.Context, matches []string, start, end time.Time, opts ...promv1.Option) ([]model.LabelSet, promv1.Warnings, error) {
	c.n.Add(1)
	v, w, err := c.Querier.Series(ctx, matches, start, end, opts...)
	signalsFrom(ctx).add(w)
	return v, w, err
}

// Count is the number of queries made so far.
func (c *CountingQuerier) Count() int { return int(c.n.Load()) }

// UnavailableError means Prometheus could not answer (unreachable, overloaded, timed out). The
// caller retries later; the data is still there.
type UnavailableError struct {
	Query string
	Err   error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("Prometheus did not answer %q: %v", text.Truncate(e.Query, 120), e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// QueryError means Prometheus refused a query (bad PromQL, wrong types): retrying cannot help.
type QueryError struct {
	Query string
	Err   error
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("query %q failed: %v", text.Truncate(e.Query, 120), e.Err)
}

func (e *QueryError) Unwrap() error { return e.Err }

// classify sorts a client error into one the caller may retry and one it may not.
func classify(query string, err error) error {
	if answerTooLarge(err) {
		return &QueryError{Query: query, Err: err}
	}
	if b := classifyBackend(query, err); b != nil {
		return b
	}
	var apiErr *promv1.Error
	if errors.As(err, &apiErr) {
		switch apiErr.Type {
		case promv1.ErrBadData, promv1.ErrExec, promv1.ErrBadResponse:
			return &QueryError{Query: query, Err: err}
		}
	}
	return &UnavailableError{Query: query, Err: err}
}

// queryTimeout bounds one query; a slower Prometheus is treated as unavailable and retried.
const queryTimeout = 2 * time.Minute

func instant(ctx context.Context, q Querier, query string, ts time.Time) (model.Value, error) {
	ctx, release := withAnswerSlot(ctx)
	defer release()
	v, _, err := q.Query(ctx, query, ts, promv1.WithTimeout(queryTimeout))
	if err != nil {
		return nil, classify(query, err)
	}
	if err := checkAnswer(query, v, maxAnswerSeries); err != nil {
		return nil, err
	}
	return v, nil
}

// customInstant is instant for a user's custom query, under the custom queries' caps: at most
// MaxCustomAnswerBytes, and MaxCustomSeries series (a Prometheus that knows the limit
// parameter stops at one more; another sends them all, within the byte cap).
func customInstant(ctx context.Context, q Querier, query string, ts time.Time) (model.Value, error) {
	ctx, release := withAnswerSlot(withAnswerLimit(ctx, MaxCustomAnswerBytes))
	defer release()
	v, _, err := q.Query(ctx, query, ts, promv1.WithTimeout(queryTimeout), promv1.WithLimit(MaxCustomSeries+1))
	if err != nil {
		return nil, classify(query, err)
	}
	if err := checkAnswer(query, v, MaxCustomSeries); err != nil {
		return nil, err
	}
	return v, nil
}

func vector(ctx context.Context, q Querier, query string, ts time.Time) (model.Vector, error) {
	v, err := instant(ctx, q, query, ts)
	if err != nil {
		return nil, err
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, &QueryError{Query: query, Err: fmt.Errorf("expected a vector, got %s", v.Type())}
	}
	return vec, nil
}

func matrix(ctx context.Context, q Querier, query string, ts time.Time) (model.Matrix, error) {
	v, err := instant(ctx, q, query, ts)
	if err != nil {
		return nil, err
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, &QueryError{Query: query, Err: fmt.Errorf("expected a matrix, got %s", v.Type())}
	}
	return m, nil
}

func rangeMatrix(ctx context.Context, q Querier, query string, r promv1.Range) (model.Matrix, error) {
	ctx, release := withAnswerSlot(ctx)
	defer release()
	v, _, err := q.QueryRange(ctx, query, r, promv1.WithTimeout(queryTimeout))
	if err != nil {
		return nil, classify(query, err)
	}
	if err := checkAnswer(query, v, maxAnswerSeries); err != nil {
		return nil, err
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, &QueryError{Query: query, Err: fmt.Errorf("expected a matrix, got %s", v.Type())}
	}
	return m, nil
}

// seriesIn lists the series of selector with samples in [from, to]. Prometheus answers from
// its index, without reading a sample, where count_over_time would decode every one.
func seriesIn(ctx context.Context, q Querier, selector string, from, to time.Time) ([]model.LabelSet, error) {
	ctx, release := withAnswerSlot(ctx)
	defer release()
	sets, _, err := q.Series(ctx, []string{selector}, from, to, promv1.WithTimeout(queryTimeout))
	if err != nil {
		return nil, classify(selector, err)
	}
	if len(sets) > maxAnswerSeries {
		return nil, &QueryError{Query: selector, Err: &AnswerTooLargeError{What: "series", Limit: maxAnswerSeries}}
	}
	return sets, nil
}
