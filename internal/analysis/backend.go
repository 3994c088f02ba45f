package analysis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/perfexp/perfexp/internal/judge"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/text"
)

// What a metrics backend says besides its data. A query frontend (Thanos Query, Mimir,
// VictoriaMetrics' vmselect) may answer from part of its stores and say so only beside the
// data: in Prometheus' "warnings" (Thanos with partial responses allowed, Prometheus itself for
// a few PromQL cases) or in VictoriaMetrics' "isPartial". Numbers read from such an answer may
// be short, so a result read while the backend warned is never called exact, and one read from
// a partial answer is Invalid.

// BackendSignals collects the warnings of one analysis' answers. Safe for concurrent use.
type BackendSignals struct {
	mu       sync.Mutex
	warnings []string
	partial  bool
}

// maxBackendWarnings bounds the distinct warnings kept: a backend repeats the same few for
// every query.
const maxBackendWarnings = 8

// partialWarning matches the warnings with which a query frontend says it answered from part
// of its stores: Thanos Query's ("No StoreAPIs matched", a store's rpc error, a timeout),
// Cortex's and Mimir's store-gateway and ingester messages, and any that says "partial".
var partialWarning = regexp.MustCompile(`(?i)partial|store ?api|store-gateway|ingester|rpc error|unavailable|deadline exceeded|timeout|timed out`)

func (s *BackendSignals) add(ws []string) {
	if s == nil || len(ws) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range ws {
		if partialWarning.MatchString(w) {
			s.partial = true
		}
		w = text.Truncate(w, 300)
		if len(s.warnings) < maxBackendWarnings && !contains(s.warnings, w) {
			s.warnings = append(s.warnings, w)
		}
	}
}

func (s *BackendSignals) markPartial(why string) {
	s.add([]string{why})
	s.mu.Lock()
	s.partial = true
	s.mu.Unlock()
}

// Warnings are the distinct warnings seen, at most maxBackendWarnings; Partial says one of
// them, or the answer itself, said the data is partial.
func (s *BackendSignals) Warnings() (warnings []string, partial bool) {
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.warnings...), s.partial
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

type signalsKey struct{}

// WithBackendSignals returns ctx that collects into s what the answers of queries made with it
// say besides their data.
func WithBackendSignals(ctx context.Context, s *BackendSignals) context.Context {
	return context.WithValue(ctx, signalsKey{}, s)
}

func signalsFrom(ctx context.Context) *BackendSignals {
	s, _ := ctx.Value(signalsKey{}).(*BackendSignals)
	return s
}

// WatchPartial wraps a transport so that an answer carrying VictoriaMetrics' "isPartial":true
// marks the signals of its request's context partial. client_golang drops the field, so it is
// looked for in the bytes as they stream past, without a second decoding.
func WatchPartial(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil || resp == nil || resp.Body == nil {
			return resp, err
		}
		if s := signalsFrom(req.Context()); s != nil {
			resp.Body = &partialScanner{ReadCloser: resp.Body, signals: s}
		}
		return resp, nil
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

var isPartialTrue = []byte(`"isPartial":true`)

// partialScanner looks for isPartialTrue in a body, keeping the last bytes of each read so a
// match split between two reads is found.
type partialScanner struct {
	io.ReadCloser
	signals *BackendSignals
	tail    []byte
	found   bool
}

func (p *partialScanner) Read(b []byte) (int, error) {
	n, err := p.ReadCloser.Read(b)
	if n > 0 && !p.found {
		buf := append(p.tail, b[:n]...)
		if bytes.Contains(buf, isPartialTrue) {
			p.found = true
			p.signals.markPartial(`the backend answered "isPartial": true (VictoriaMetrics: some vmstorage nodes did not answer)`)
		}
		keep := min(len(buf), len(isPartialTrue)-1)
		p.tail = append(p.tail[:0], buf[len(buf)-keep:]...)
	}
	return n, err
}

// UnauthorizedError means the backend refused perfexp's credentials (401 or 403): retrying
// with the same ones cannot help.
type UnauthorizedError struct {
	Query string
	Err   error
}

func (e *UnauthorizedError) Error() string {
	return fmt.Sprintf("the backend refused the credentials for query %q: %v", text.Truncate(e.Query, 120), e.Err)
}

func (e *UnauthorizedError) Unwrap() error { return e.Err }

// LimitError means the backend refused a query for one of its own limits. Asking again
// cannot help; the message says which limit, so an administrator knows what to raise.
type LimitError struct {
	Query string
	// Limit names the limit in the backend's terms.
	Limit string
	Err   error
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the backend refused query %q for its limit on %s: %v", text.Truncate(e.Query, 120), e.Limit, e.Err)
}

func (e *LimitError) Unwrap() error { return e.Err }

// backendLimits are the messages with which Prometheus, Thanos, Mimir/Cortex and
// VictoriaMetrics refuse a query for a limit, and the limit each names.
var backendLimits = []struct {
	re    *regexp.Regexp
	limit string
}{
	{regexp.MustCompile(`(?i)exceeded maximum resolution`), "points per series (Prometheus: 11,000 points per series; a longer step or a shorter window)"},
	{regexp.MustCompile(`(?i)would load too many samples`), "samples loaded by one query (Prometheus --query.max-samples)"},
	{regexp.MustCompile(`(?i)max(imum)?[ _-]?(number of )?(fetched[ _-])?series[ _-]?(per[ _-]query)?|series limit|too many series|err-mimir-max-series|matching timeseries exceeds|maxUniqueTimeseries|maxSeries`), "series per query (Mimir/Cortex -querier.max-fetched-series-per-query, Thanos --store.limits.request-series, VictoriaMetrics -search.maxUniqueTimeseries)"},
	{regexp.MustCompile(`(?i)max(imum)?[ _-]?(number of )?(fetched[ _-])?(chunks|chunk bytes)|chunks limit|err-mimir-max-chunks`), "chunks per query (Mimir/Cortex -querier.max-fetched-chunks-per-query, Thanos --store.limits.request-samples)"},
	{regexp.MustCompile(`(?i)maxSamplesPerQuery|samples limit|too many samples|max-samples`), "samples per query (VictoriaMetrics -search.maxSamplesPerQuery, Thanos --store.limits.request-samples)"},
	{regexp.MustCompile(`(?i)query time range exceeds|max-total-query-length|maxQueryDuration|query length`), "the length of a query's range (Mimir/Cortex -query-frontend.max-total-query-length, VictoriaMetrics -search.maxQueryDuration)"},
}

// classifyBackend recognises the refusals of a backend that are neither bad PromQL nor an
// unreachable server: credentials refused, and limits. nil when err is neither.
func classifyBackend(query string, err error) error {
	var apiErr *promv1.Error
	if !errors.As(err, &apiErr) {
		return nil
	}
	msg := apiErr.Msg + " " + apiErr.Detail
	if apiErr.Type == promv1.ErrClient && (strings.Contains(apiErr.Msg, "401") || strings.Contains(apiErr.Msg, "403")) {
		return &UnauthorizedError{Query: query, Err: errors.New(shortAPIError(apiErr))}
	}
	for _, l := range backendLimits {
		if l.re.MatchString(msg) {
			return &LimitError{Query: query, Limit: l.limit, Err: errors.New(shortAPIError(apiErr))}
		}
	}
	return nil
}

// shortAPIError is the backend's message without a long HTML or JSON body.
func shortAPIError(e *promv1.Error) string {
	if e.Detail == "" {
		return e.Msg
	}
	return e.Msg + ": " + text.Truncate(strings.TrimSpace(e.Detail), 300)
}

// markBackendWarnings records what the backend said besides its data: the warnings, a note
// that the counts are not exact, and, for a partial answer, Invalid results (a count read
// from part of the stores is short, and a comparison made with it is not one).
func markBackendWarnings(r *result.Result, s *BackendSignals) {
	warnings, partial := s.Warnings()
	if len(warnings) == 0 {
		return
	}
	r.BackendWarnings = warnings
	r.CountsInexact = true
	if partial {
		judge.MarkInvalid(r, "the metrics backend answered partially (some of its stores did not answer), so the counts may be short: "+warnings[0])
		return
	}
	r.Notes = append(r.Notes, fmt.Sprintf("the metrics backend warned while answering (%d distinct warnings, the first: %s); the counts are not called exact", len(warnings), warnings[0]))
}

// Classify sorts a client error the way the analysis does: *UnauthorizedError, *LimitError,
// *QueryError (retrying cannot help) or *UnavailableError (retry later).
func Classify(query string, err error) error { return classify(query, err) }
