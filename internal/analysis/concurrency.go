package analysis

import (
	"context"
	"sync"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// maxConcurrentQueries bounds the queries one analysis has in flight. Most of an analysis'
// time is Prometheus encoding answers and the client decoding them, one core per query; a few
// at once use a multi-core Prometheus without letting one analysis crowd out dashboards.
const maxConcurrentQueries = 4

// boundedQuerier lets at most cap(sem) queries run at once.
type boundedQuerier struct {
	Querier
	sem chan struct{}
}

func newBoundedQuerier(q Querier, n int) *boundedQuerier {
	return &boundedQuerier{Querier: q, sem: make(chan struct{}, n)}
}

func (b *boundedQuerier) acquire(ctx context.Context) error {
	select {
	case b.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Query waits for a free slot and forwards an instant query.
func (b *boundedQuerier) Query(ctx context.Context, query string, ts time.Time, opts ...promv1.Option) (model.Value, promv1.Warnings, error) {
	if err := b.acquire(ctx); err != nil {
		return nil, nil, err
	}
	defer func() { <-b.sem }()
	return b.Querier.Query(ctx, query, ts, opts...)
}

// QueryRange waits for a free slot and forwards a range query.
func (b *boundedQuerier) QueryRange(ctx context.Context, query string, r promv1.Range, opts ...promv1.Option) (model.Value, promv1.Warnings, error) {
	if err := b.acquire(ctx); err != nil {
		return nil, nil, err
	}
	defer func() { <-b.sem }()
	return b.Querier.QueryRange(ctx, query, r, opts...)
}

// Series waits for a free slot and forwards a series lookup.
func (b *boundedQuerier) Series(ctx context.Context, matches []string, start, end time.Time, opts ...promv1.Option) ([]model.LabelSet, promv1.Warnings, error) {
	if err := b.acquire(ctx); err != nil {
		return nil, nil, err
	}
	defer func() { <-b.sem }()
	return b.Querier.Series(ctx, matches, start, end, opts...)
}

// together runs fns concurrently and returns the first error in the order they were given,
// so the error an analysis reports does not depend on which query happened to finish first.
func together(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
