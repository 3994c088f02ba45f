package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/prometheus/common/model"
)

// Every answer perfexp reads from Prometheus is capped, so that no query, a user's custom one
// included, can make the manager hold more than a known amount: the bytes at the HTTP layer
// (LimitAnswers, before anything is decoded) and the series and samples once decoded. The
// legitimate answers are far below the caps: the largest measured, the interval histograms of
// 50 workloads x 200 request names over an hour, was 24 MB of JSON before issue 14 and is a
// few MB now.
const (
	// DefaultMaxAnswerBytes is the most one answer may hold, counted after decompression.
	DefaultMaxAnswerBytes = 32 << 20
	// maxAnswerSeries is the most series (or label sets) one answer may hold.
	maxAnswerSeries = 50_000
	// maxAnswerSamples is the most samples (floats and histograms) one answer may hold.
	maxAnswerSamples = 1_000_000

	// MaxCustomAnswerBytes is the most a custom query's answer may hold: a custom query's
	// result is one value, or a few labelled ones.
	MaxCustomAnswerBytes = 4 << 20
	// MaxCustomSeries is the most series of a custom query's answer perfexp reads; past it the
	// query's result is an error asking for an aggregation.
	MaxCustomSeries = 10_000
)

// AnswerTooLargeError is an answer over one of the caps. Asking again cannot help: the data
// is what it is, so it is reported (a QueryError), never retried.
type AnswerTooLargeError struct {
	// What is counted: "bytes", "series" or "samples".
	What string
	// Limit is the cap that was passed.
	Limit int64
}

func (e *AnswerTooLargeError) Error() string {
	return fmt.Sprintf("the answer has more than %d %s; perfexp reads at most %d %s of one answer", e.Limit, e.What, e.Limit, e.What)
}

type answerLimitKey struct{}

// largeAnswerBytes is the size past which an answer is large: it may be read only while it
// holds one of the manager's largeAnswers slots. A capped answer costs about four times its
// bytes while it is read and decoded (the client's growing buffer, its copy of the data, the
// decoded values), so a few large answers at once, from several analyses, would add up past
// the manager's memory limit where one at a time stays well inside it.
const largeAnswerBytes = 4 << 20

// largeAnswers are the slots, one per large answer being read or decoded, process-wide.
var largeAnswers = make(chan struct{}, 1)

type answerSlotKey struct{}

// answerSlot is a query's claim on a largeAnswers slot. The reader of the answer takes it
// when the answer grows large; whoever made the query releases it once the answer is decoded
// (a query made without one releases it when the body is closed, before decoding).
type answerSlot struct {
	mu   sync.Mutex
	held bool
}

// withAnswerSlot returns ctx carrying a new slot and the function that frees the slot if the
// answer took it: call it once the answer is decoded.
func withAnswerSlot(ctx context.Context) (context.Context, func()) {
	slot := &answerSlot{}
	return context.WithValue(ctx, answerSlotKey{}, slot), slot.release
}

func (s *answerSlot) take(ctx context.Context) error {
	select {
	case largeAnswers <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	s.held = true
	s.mu.Unlock()
	return nil
}

func (s *answerSlot) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		s.held = false
		<-largeAnswers
	}
}

// withAnswerLimit lowers the byte cap of the answers to the queries made with ctx.
func withAnswerLimit(ctx context.Context, maxBytes int64) context.Context {
	return context.WithValue(ctx, answerLimitKey{}, maxBytes)
}

// LimitAnswers wraps rt so that no answer body is read past maxBytes (the lower of maxBytes
// and the query's own cap, see withAnswerLimit): the read fails with an *AnswerTooLargeError
// instead, and an answer that announces a larger Content-Length is refused before it is read.
func LimitAnswers(rt http.RoundTripper, maxBytes int64) http.RoundTripper {
	return &limitedTransport{next: rt, max: maxBytes}
}

type limitedTransport struct {
	next http.RoundTripper
	max  int64
}

func (t *limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	limit := t.max
	if l, ok := req.Context().Value(answerLimitKey{}).(int64); ok && l < limit {
		limit = l
	}
	if resp.ContentLength > limit {
		_ = resp.Body.Close()
		return nil, &AnswerTooLargeError{What: "bytes", Limit: limit}
	}
	body := &limitedBody{body: resp.Body, left: limit, limit: limit, ctx: req.Context()}
	if slot, ok := req.Context().Value(answerSlotKey{}).(*answerSlot); ok {
		body.slot = slot
	} else {
		body.slot, body.ownSlot = &answerSlot{}, true
	}
	resp.Body = body
	return resp, nil
}

// limitedBody reads at most limit bytes of body and fails on the byte after. Past
// largeAnswerBytes it waits for a largeAnswers slot.
type limitedBody struct {
	body    io.ReadCloser
	left    int64
	limit   int64
	ctx     context.Context
	slot    *answerSlot
	ownSlot bool // released on Close: no caller releases it after decoding
	large   bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if !b.large && b.limit-b.left >= largeAnswerBytes {
		if err := b.slot.take(b.ctx); err != nil {
			return 0, err
		}
		b.large = true
	}
	if b.left <= 0 {
		// One byte more tells a body of exactly limit bytes from a longer one.
		var one [1]byte
		n, err := b.body.Read(one[:])
		if n > 0 {
			return 0, &AnswerTooLargeError{What: "bytes", Limit: b.limit}
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error {
	if b.ownSlot {
		b.slot.release()
	}
	return b.body.Close()
}

// checkAnswer refuses a decoded answer with more than maxSeries series or maxAnswerSamples
// samples.
func checkAnswer(query string, v model.Value, maxSeries int) error {
	series, samples := 0, 0
	switch val := v.(type) {
	case model.Vector:
		series, samples = len(val), len(val)
	case model.Matrix:
		series = len(val)
		for _, s := range val {
			samples += len(s.Values) + len(s.Histograms)
		}
	}
	switch {
	case series > maxSeries:
		return &QueryError{Query: query, Err: &AnswerTooLargeError{What: "series", Limit: int64(maxSeries)}}
	case samples > maxAnswerSamples:
		return &QueryError{Query: query, Err: &AnswerTooLargeError{What: "samples", Limit: maxAnswerSamples}}
	}
	return nil
}

// answerTooLarge reports whether err is, or wraps, an *AnswerTooLargeError.
func answerTooLarge(err error) bool {
	var tooLarge *AnswerTooLargeError
	return errors.As(err, &tooLarge)
}
