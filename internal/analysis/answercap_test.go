package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
	"github.com/perfexp/perfexp/internal/testenv"
)

// fakeProm answers every query with a vector of n series, streamed, without a Content-Length
// unless announce is set. It stops writing when the client hangs up.
func fakeProm(t testing.TB, n int, announce bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if announce {
			w.Header().Set("Content-Length", fmt.Sprint(1<<40))
		}
		if _, err := io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[`); err != nil {
			return
		}
		for i := range n {
			sep := ","
			if i == n-1 {
				sep = ""
			}
			if _, err := fmt.Fprintf(w, `{"metric":{"__name__":"http_requests_total","pod":"web-%08d","path":"/api/v1/items/%d"},"value":[1700000000,"%d"]}%s`, i, i, i, sep); err != nil {
				return
			}
		}
		_, _ = io.WriteString(w, `]}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// cappedAPI is the client the manager builds (internal/analyzer), with a byte cap.
func cappedAPI(t testing.TB, url string, maxBytes int64) promv1.API {
	t.Helper()
	transport := api.DefaultRoundTripper
	if maxBytes > 0 {
		transport = LimitAnswers(transport, maxBytes)
	}
	c, err := api.NewClient(api.Config{Address: url, Client: &http.Client{Timeout: time.Minute, Transport: transport}})
	if err != nil {
		t.Fatal(err)
	}
	return promv1.NewAPI(c)
}

func TestAnswerCaps(t *testing.T) {
	tests := []struct {
		name     string
		series   int
		announce bool
		maxBytes int64
		wantErr  string
	}{
		{"an answer over the byte cap is cut while it is read", 200_000, false, 1 << 20, "the answer has more than 1048576 bytes; perfexp reads at most 1048576 bytes of one answer"},
		{"an announced length over the cap is refused unread", 10, true, 1 << 20, "the answer has more than 1048576 bytes"},
		{"an answer over the series cap is refused", maxAnswerSeries + 1, false, 1 << 30, fmt.Sprintf("the answer has more than %d series", maxAnswerSeries)},
		{"an answer under every cap is read", 1000, false, 1 << 20, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := cappedAPI(t, fakeProm(t, tt.series, tt.announce).URL, tt.maxBytes)
			v, err := vector(t.Context(), q, "http_requests_total", time.Now())
			if tt.wantErr == "" {
				if err != nil || len(v) != tt.series {
					t.Fatalf("got %d series, %v", len(v), err)
				}
				return
			}
			var refused *QueryError
			var unavailable *UnavailableError
			if !errors.As(err, &refused) || errors.As(err, &unavailable) {
				t.Fatalf("err = %v (%T); want a QueryError: asking again cannot shrink the answer", err, err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// matrixQuerier answers every range query with the same matrix.
type matrixQuerier struct {
	Querier
	m model.Matrix
}

func (q matrixQuerier) QueryRange(context.Context, string, promv1.Range, ...promv1.Option) (model.Value, promv1.Warnings, error) {
	return q.m, nil, nil
}

func TestRangeAnswerSampleCap(t *testing.T) {
	points := make([]model.SamplePair, maxAnswerSamples/4+1)
	m := model.Matrix{{Values: points}, {Values: points}, {Values: points}, {Values: points}}
	_, err := rangeMatrix(t.Context(), matrixQuerier{m: m}, "x", promv1.Range{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d samples", maxAnswerSamples)) {
		t.Fatalf("err = %v", err)
	}
	m = m[:3]
	if _, err := rangeMatrix(t.Context(), matrixQuerier{m: m}, "x", promv1.Range{}); err != nil {
		t.Fatalf("an answer under the cap: %v", err)
	}
}

// A custom query's answer: under MaxCustomSeries it is summarised (the largest series kept,
// the rest counted); over it, or over MaxCustomAnswerBytes, the query's result is an error that
// says so, and the other queries and the analysis go on.
func TestCustomQueryCaps(t *testing.T) {
	tests := []struct {
		series              int
		wantKept, wantDropd int
		wantErr             string
	}{
		{series: 1, wantKept: 1},
		{series: 3000, wantKept: MaxQuerySeriesKept, wantDropd: 3000 - MaxQuerySeriesKept},
		{series: MaxCustomSeries + 1, wantErr: fmt.Sprintf("the answer has more than %d series", MaxCustomSeries)},
		{series: 100_000, wantErr: fmt.Sprintf("the answer has more than %d bytes", MaxCustomAnswerBytes)},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.series), func(t *testing.T) {
			q := cappedAPI(t, fakeProm(t, tt.series, false).URL, DefaultMaxAnswerBytes)
			specs := []perfexpv1alpha1.CustomQuery{{Name: "by-pod", Query: `sum by (pod) (rate(http_requests_total{namespace="{{.Namespace}}"}[{{.Window}}]))`}}
			got, err := runQueries(t.Context(), q, specs, testData(), QueryScope{Namespace: "shop"}, time.Now())
			if err != nil {
				t.Fatalf("runQueries: %v; a capped answer must not fail the analysis", err)
			}
			qr := got[0]
			if tt.wantErr != "" {
				if !strings.Contains(qr.Error, tt.wantErr) || len(qr.Series) != 0 {
					t.Fatalf("error %q with %d series, want %q", qr.Error, len(qr.Series), tt.wantErr)
				}
				return
			}
			if qr.Error != "" || len(qr.Series) != tt.wantKept || qr.SeriesDropped != tt.wantDropd {
				t.Fatalf("kept %d, dropped %d, error %q; want %d and %d", len(qr.Series), qr.SeriesDropped, qr.Error, tt.wantKept, tt.wantDropd)
			}
			res := &result.Result{Queries: got}
			if st, _ := res.Status(); st.Queries[0].Series != int32(tt.series) {
				t.Fatalf("status.results.queries[0].series = %d, want every series counted: %d", st.Queries[0].Series, tt.series)
			}
			if tt.wantDropd > 0 {
				// The kept ones are the largest values: tt.series-1 down to tt.series-50.
				for _, s := range qr.Series {
					if *s.Value < float64(tt.series-MaxQuerySeriesKept) {
						t.Fatalf("kept %v = %v, not one of the %d largest", s.Labels, *s.Value, MaxQuerySeriesKept)
					}
				}
				if qr.Value != nil {
					t.Fatalf("a summarised result has a single value %v", *qr.Value)
				}
			}
		})
	}
}

func TestKeptLabelsAreBounded(t *testing.T) {
	m := model.Metric{}
	for i := range 100 {
		m[model.LabelName(fmt.Sprintf("l%03d", i))] = model.LabelValue(strings.Repeat("é", 1000))
	}
	labels := keptLabels(m)
	if len(labels) != maxQueryLabels {
		t.Fatalf("%d labels kept", len(labels))
	}
	for k, v := range labels {
		if len(v) > maxQueryLabelValue || !strings.HasSuffix(v, "...") || strings.ContainsRune(v, '\uFFFD') {
			t.Fatalf("label %s kept as %d bytes %q", k, len(v), v[len(v)-10:])
		}
	}
}

// BenchmarkReadHugeAnswer reads a 256 MiB answer (about 1.9 million series) the way the
// manager does: capped, it stops at DefaultMaxAnswerBytes; uncapped (the client before the
// caps), it reads and decodes the lot. MiB-allocated/op is what the manager allocates for it,
// peak-heap-MiB the largest live heap seen while it reads.
func BenchmarkReadHugeAnswer(b *testing.B) {
	const series = 1_900_000
	srv := fakeProm(b, series, false)
	for _, bc := range []struct {
		name     string
		maxBytes int64
	}{{"capped", DefaultMaxAnswerBytes}, {"uncapped", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			q := cappedAPI(b, srv.URL, bc.maxBytes)
			var before, after runtime.MemStats
			peak := uint64(0)
			for b.Loop() {
				runtime.GC()
				runtime.ReadMemStats(&before)
				stop := make(chan struct{})
				done := make(chan uint64)
				go func() { done <- testenv.PeakHeap(stop) }()
				_, _, err := q.Query(b.Context(), "http_requests_total", time.Now())
				close(stop)
				peak = max(peak, <-done)
				runtime.ReadMemStats(&after)
				if bc.maxBytes > 0 && !answerTooLarge(err) {
					b.Fatalf("err = %v, want the cap", err)
				}
				if bc.maxBytes == 0 && err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "MiB-allocated/op")
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// Answers over largeAnswerBytes are read one at a time across the manager; smaller ones are not
// held up by them.
func TestLargeAnswersWaitForTheSlot(t *testing.T) {
	large := cappedAPI(t, fakeProm(t, 45_000, false).URL, DefaultMaxAnswerBytes) // ~5 MB
	small := cappedAPI(t, fakeProm(t, 1000, false).URL, DefaultMaxAnswerBytes)
	largeAnswers <- struct{}{} // another analysis is decoding a large answer
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := vector(ctx, small, "x", time.Now()); err != nil {
		t.Fatalf("a small answer waited: %v", err)
	}
	var unavailable *UnavailableError
	if _, err := vector(ctx, large, "x", time.Now()); !errors.As(err, &unavailable) {
		t.Fatalf("err = %v; want the large answer to wait for the slot until its deadline (and be retried)", err)
	}
	<-largeAnswers
	v, err := vector(t.Context(), large, "x", time.Now())
	if err != nil || len(v) != 45_000 {
		t.Fatalf("with the slot free: %d series, %v", len(v), err)
	}
	if len(largeAnswers) != 0 {
		t.Fatal("the slot was not released after the answer was decoded")
	}
}
