package analyzer_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/testenv"
)

// queryFrontend stands in for a query frontend (Thanos Query, Mimir's query-frontend,
// vmselect) in front of a real Prometheus: it passes every query on and edits the answers the
// way such a frontend does when part of its stores did not answer or a limit was hit.
func queryFrontend(t *testing.T, prom *promtest.Server, edit func(query string, body map[string]json.RawMessage) (int, map[string]json.RawMessage)) (string, *atomic.Int64) {
	t.Helper()
	target, _ := url.Parse(prom.URL)
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Header.Del("Accept-Encoding") // answers to edit, not gzip
	}}
	proxy.ModifyResponse = func(resp *http.Response) error {
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return err
		}
		query := resp.Request.URL.Query().Get("query")
		if query == "" && resp.Request.Body != nil {
			query = resp.Request.Header.Get("X-Query")
		}
		body := map[string]json.RawMessage{}
		if json.Unmarshal(b, &body) == nil {
			code, edited := edit(query, body)
			if code != 0 {
				resp.StatusCode = code
			}
			b, _ = json.Marshal(edited)
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	// client_golang posts its queries as forms: the query is copied into a header the
	// response editor can read.
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if err := r.ParseForm(); err == nil {
			r.Header.Set("X-Query", r.Form.Get("query"))
			enc := r.PostForm.Encode()
			r.Body = io.NopCloser(strings.NewReader(enc))
			r.ContentLength = int64(len(enc))
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &asked
}

func frontendExperiment(t *testing.T, prom *promtest.Server) (*perfexpv1alpha1.PerfExperiment, time.Time) {
	t.Helper()
	end := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	start := end.Add(-4 * time.Minute)
	s := promtest.NewK6Series(promtest.K6Labels("fe-run", "checkinout", "check-out", "0", true))
	for i := 1; i <= 40; i++ {
		s.Flush(start.Add(time.Duration(i)*5*time.Second), 0.020, 0.030)
	}
	prom.Write(t, s.Series())
	exp := experiment("perf", "through-frontend")
	exp.Status = perfexpv1alpha1.PerfExperimentStatus{Phase: perfexpv1alpha1.PhaseAnalyzing, TestID: "fe-run",
		Window: &perfexpv1alpha1.Window{Start: &metav1.Time{Time: start}, End: &metav1.Time{Time: end}}}
	return exp, end
}

func withWarnings(ws ...string) func(string, map[string]json.RawMessage) (int, map[string]json.RawMessage) {
	return func(_ string, body map[string]json.RawMessage) (int, map[string]json.RawMessage) {
		body["warnings"], _ = json.Marshal(ws)
		return 0, body
	}
}

// What a query frontend says beside its data reaches the results: a warning keeps them but
// the counts are not called exact (status, report); a partial answer (Thanos' warnings of a
// store that did not answer, VictoriaMetrics' isPartial) makes them Invalid; a limit refusal
// fails the analysis naming the limit instead of "Prometheus refused a query".
func TestAnalysisThroughAQueryFrontend(t *testing.T) {
	prom := promtest.Start(t)
	base, end := frontendExperiment(t, prom)
	passThrough := func(_ string, body map[string]json.RawMessage) (int, map[string]json.RawMessage) { return 0, body }
	tests := []struct {
		name string
		edit func(string, map[string]json.RawMessage) (int, map[string]json.RawMessage)
		// wantValidity empty: the analysis fails with wantReason.
		wantValidity perfexpv1alpha1.Validity
		wantReason   string
		wantText     string
	}{
		{name: "a frontend that passes everything on changes nothing", edit: passThrough, wantValidity: perfexpv1alpha1.Valid},
		{name: "a warning keeps the results but not their exactness",
			edit:         withWarnings("PromQL warning: encountered a mix of histograms and floats for metric name \"k6_http_req_duration_seconds\""),
			wantValidity: perfexpv1alpha1.Valid, wantText: "mix of histograms"},
		{name: "a Thanos partial response makes them Invalid",
			edit:         withWarnings(`fetch series for {__name__="k6_http_reqs_total"}: receive 10.0.3.7:10901: rpc error: code = Unavailable desc = connection refused`),
			wantValidity: perfexpv1alpha1.Invalid, wantText: "answered partially"},
		{name: "VictoriaMetrics' isPartial makes them Invalid",
			edit: func(_ string, body map[string]json.RawMessage) (int, map[string]json.RawMessage) {
				body["isPartial"] = json.RawMessage("true")
				return 0, body
			},
			wantValidity: perfexpv1alpha1.Invalid, wantText: "isPartial"},
		{name: "Prometheus' sample limit is named as a limit",
			edit: func(q string, body map[string]json.RawMessage) (int, map[string]json.RawMessage) {
				if !strings.Contains(q, "k6_http_req_duration_seconds") {
					return 0, body
				}
				return http.StatusUnprocessableEntity, map[string]json.RawMessage{"status": json.RawMessage(`"error"`), "errorType": json.RawMessage(`"execution"`),
					"error": json.RawMessage(`"query processing would load too many samples into memory in query execution"`)}
			},
			wantReason: perfexpv1alpha1.ReasonBackendLimit, wantText: "samples loaded by one query"},
		{name: "Mimir's series limit is named as a limit",
			edit: func(q string, body map[string]json.RawMessage) (int, map[string]json.RawMessage) {
				return http.StatusUnprocessableEntity, map[string]json.RawMessage{"status": json.RawMessage(`"error"`), "errorType": json.RawMessage(`"execution"`),
					"error": json.RawMessage(`"the query exceeded the maximum number of series (limit: 100000 series) (err-mimir-max-series-per-query)"`)}
			},
			wantReason: perfexpv1alpha1.ReasonBackendLimit, wantText: "series per query"},
	}
	var plainQueries int64
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := base.DeepCopy()
			c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(exp.DeepCopy()).Build()
			url, asked := queryFrontend(t, prom, tt.edit)
			a := &analyzer.PrometheusAnalyzer{Client: c, PrometheusURL: url, Clock: clocktesting.NewFakePassiveClock(end.Add(time.Minute))}
			res, err := a.Analyze(t.Context(), exp, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Warnings and partial answers are read from the answers already asked for: never
			// a query more than through a frontend that says nothing.
			t.Logf("%d queries through the frontend", asked.Load())
			if tt.wantValidity != "" {
				if plainQueries == 0 {
					plainQueries = asked.Load()
				} else if asked.Load() != plainQueries {
					t.Errorf("%d queries; %d through a frontend that passes everything on", asked.Load(), plainQueries)
				}
			}
			if tt.wantValidity == "" {
				if res.Failure == nil || res.Failure.Reason != tt.wantReason || !strings.Contains(res.Failure.Message, tt.wantText) {
					t.Fatalf("got %+v", res)
				}
				return
			}
			r := exp.Status.Results
			if tt.wantText == "" {
				if !res.Done || r == nil || r.Validity != perfexpv1alpha1.Valid || len(r.BackendWarnings) != 0 {
					t.Fatalf("got %+v, results %+v", res, r)
				}
				return
			}
			if !res.Done || r == nil || r.Validity != tt.wantValidity || len(r.BackendWarnings) == 0 || !strings.Contains(strings.Join(r.BackendWarnings, " "), tt.wantText) && !strings.Contains(r.InvalidReason, tt.wantText) {
				t.Fatalf("got %+v, results %+v", res, r)
			}
			if tt.wantValidity == perfexpv1alpha1.Invalid && !strings.Contains(r.InvalidReason, "answered partially") {
				t.Errorf("invalid reason %q", r.InvalidReason)
			}
			cm := &corev1.ConfigMap{}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: exp.Namespace, Name: exp.Status.ReportRef.Name}, cm); err != nil {
				t.Fatal(err)
			}
			all, _ := json.Marshal(cm.Data)
			if !strings.Contains(string(all), "not exact") || strings.Contains(string(all), "measured window (exact;") {
				t.Errorf("the report still calls the counts exact")
			}
		})
	}
}
