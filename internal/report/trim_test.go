package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/analysis"
	"github.com/perfexp/perfexp/internal/result"
)

// manyRequests is a run whose one scenario made n differently named requests, the most
// frequent first as the analysis lists them; every slice lists them too.
func manyRequests(n, nameLen int) *result.Result {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	sc := result.ScenarioResult{Name: "browse"}
	for i := range n {
		count := int64(n - i)
		name := fmt.Sprintf("GET /items/%05d/", i)
		name += strings.Repeat("x", max(0, nameLen-len(name)))
		sc.Requests = append(sc.Requests, result.RequestResult{Name: name, RequestStats: result.RequestStats{Requests: &count}})
	}
	total := int64(n * (n + 1) / 2)
	sc.RequestStats.Requests = &total
	return &result.Result{Experiment: "many", Namespace: "perf", TestID: "many-1",
		Window:    result.WindowInfo{Start: start, End: start.Add(10 * time.Minute)},
		Notes:     []string{"a note of the analysis"},
		Scenarios: []result.ScenarioResult{sc},
		Slices: []result.SliceResult{{Name: "first half", Start: start, End: start.Add(5 * time.Minute),
			Scenarios: []result.ScenarioResult{sc}}},
	}
}

func TestTrimRequests(t *testing.T) {
	tests := []struct {
		name      string
		requests  int
		keep      int
		wantKept  int
		wantNoted bool
	}{
		{name: "a longer list is cut to the most frequent names, with a note", requests: 30, keep: 20, wantKept: 20, wantNoted: true},
		{name: "a list as long as the bound is left whole, without a note", requests: 20, keep: 20, wantKept: 20},
		{name: "a shorter list is left whole", requests: 5, keep: 20, wantKept: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := manyRequests(tt.requests, 0)
			got := TrimRequests(r, tt.keep)
			if n := len(got.Scenarios[0].Requests); n != tt.wantKept {
				t.Errorf("%d request names kept, want %d", n, tt.wantKept)
			}
			if n := len(got.Slices[0].Scenarios[0].Requests); n != tt.wantKept {
				t.Errorf("%d request names kept in the slice, want %d", n, tt.wantKept)
			}
			if got.Scenarios[0].Requests[0].Name != r.Scenarios[0].Requests[0].Name {
				t.Errorf("the first name kept is %q, want the most frequent %q", got.Scenarios[0].Requests[0].Name, r.Scenarios[0].Requests[0].Name)
			}
			noted := len(got.Notes) == 2 && strings.Contains(got.Notes[1], fmt.Sprintf("only the %d most frequent request names", tt.keep))
			if noted != tt.wantNoted || got.Notes[0] != r.Notes[0] {
				t.Errorf("notes %q, want the analysis's note and a trimming note: %v", got.Notes, tt.wantNoted)
			}
			// The analysis's own result is what status.results is written from: untouched.
			if len(r.Scenarios[0].Requests) != tt.requests || len(r.Slices[0].Scenarios[0].Requests) != tt.requests || len(r.Notes) != 1 {
				t.Errorf("the original result was changed: %d names, %d in the slice, notes %q",
					len(r.Scenarios[0].Requests), len(r.Slices[0].Scenarios[0].Requests), r.Notes)
			}
		})
	}
}

func TestConfigMapData(t *testing.T) {
	tests := []struct {
		name     string
		result   *result.Result
		wantKept int // request names listed in results.json; -1: the report does not fit
		wantLean bool
	}{
		{name: "a report that fits is whole", result: manyRequests(40, 0), wantKept: 40},
		// 2,000 names of 200 bytes are over 400 KB in results.json alone, over the bound
		// with the other documents; 500 of them fit.
		{name: "a report too large keeps the most frequent names that fit", result: manyRequests(2000, 200), wantKept: 500},
		{name: "a report too large even with 20 names keeps its numbers in report.md and results.json", result: func() *result.Result {
			r := manyRequests(10, 0)
			r.Notes = append(r.Notes, strings.Repeat("n", MaxConfigMapBytes))
			return r
		}(), wantKept: 10, wantLean: true},
		{name: "a report too large even lean is refused", result: func() *result.Result {
			r := manyRequests(10, 0)
			for range MaxConfigMapBytes / 1000 {
				r.Notes = append(r.Notes, strings.Repeat("n", 1000))
			}
			return r
		}(), wantKept: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := ConfigMapData(tt.result, DashboardOptions{}, HTMLOptions{})
			if tt.wantKept < 0 {
				if err == nil || !strings.Contains(err.Error(), "does not fit a ConfigMap") {
					t.Fatalf("err %v, want the report refused as too large", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			keys := []string{KeyMarkdown, KeyJSON, KeyDashboard, KeyHTML}
			if tt.wantLean {
				keys = keys[:2]
				if len(data) != 2 || !strings.Contains(data[KeyMarkdown], "report.html and dashboard.json were left out") {
					t.Errorf("the lean report has %d documents and says %q", len(data), lastLine(data[KeyMarkdown]))
				}
			}
			for _, k := range keys {
				if data[k] == "" {
					t.Errorf("the report lacks %s", k)
				}
			}
			if size := dataSize(data); size > MaxConfigMapBytes {
				t.Errorf("the report holds %d bytes, more than %d", size, MaxConfigMapBytes)
			}
			got, err := ParseJSON([]byte(data[KeyJSON]))
			if err != nil {
				t.Fatal(err)
			}
			if n := len(got.Scenarios[0].Requests); n != tt.wantKept {
				t.Errorf("results.json lists %d request names, want %d", n, tt.wantKept)
			}
			trimmed := tt.wantKept < len(tt.result.Scenarios[0].Requests)
			if said := strings.Contains(data[KeyMarkdown], "most frequent request names per scenario are listed"); said != trimmed {
				t.Errorf("report.md says it was trimmed: %v, trimmed: %v", said, trimmed)
			}
		})
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

// manySeries is a run with queries custom queries, each returning series labelled series (the
// analysis keeps at most analysis.MaxQuerySeriesKept), every label value 200 bytes long, in
// the whole window and in two slices: the most the analysis keeps of what a user can write.
func manySeries(queries, series int) *result.Result {
	r := manyRequests(5, 0)
	var qs []result.QueryResult
	for q := range queries {
		qr := result.QueryResult{Name: fmt.Sprintf("q%02d", q), Query: "sum by (pod) (x)", SeriesDropped: 3000}
		for i := range series {
			labels := map[string]string{}
			for l := range 32 {
				labels[fmt.Sprintf("label%02d", l)] = fmt.Sprintf("%03d-%s", i, strings.Repeat("v", 196))
			}
			v := float64(i)
			qr.Series = append(qr.Series, result.QuerySeries{Labels: labels, Value: &v})
		}
		qs = append(qs, qr)
	}
	r.Queries = qs
	for i := range r.Slices {
		r.Slices[i].Queries = qs
	}
	r.Slices = append(r.Slices, r.Slices[0])
	return r
}

func TestTrimQuerySeries(t *testing.T) {
	r := manySeries(2, 30)
	got := TrimQuerySeries(r, 10)
	for _, qs := range [][]result.QueryResult{got.Queries, got.Slices[0].Queries, got.Slices[1].Queries} {
		for _, q := range qs {
			if len(q.Series) != 10 || q.SeriesDropped != 3000+20 {
				t.Fatalf("query %s: %d series kept, %d dropped; want 10 and 3020", q.Name, len(q.Series), q.SeriesDropped)
			}
			for _, s := range q.Series {
				if *s.Value < 20 {
					t.Fatalf("kept the series of value %v; want the 10 largest", *s.Value)
				}
			}
		}
	}
	if !strings.Contains(got.Notes[len(got.Notes)-1], "only the 10 largest series of each custom query are listed") {
		t.Errorf("notes %q", got.Notes)
	}
	if len(r.Queries[0].Series) != 30 || r.Queries[0].SeriesDropped != 3000 || len(r.Slices[0].Queries[0].Series) != 30 || len(r.Notes) != 1 {
		t.Error("the original result was changed")
	}
	if same := TrimQuerySeries(r, 30); len(same.Notes) != 1 {
		t.Errorf("a list as long as the bound was noted as cut: %q", same.Notes)
	}
}

// 32 custom queries of 50 series with 32 long labels each (what the analysis keeps of queries
// returning thousands of series), in the window and two slices, made the report 20 times too
// large for its ConfigMap: publishing failed until the analysis deadline and the run's results
// were never recorded. The series are cut to fit, and the report says how many were left out.
func TestConfigMapDataCutsCustomQuerySeries(t *testing.T) {
	r := manySeries(32, analysis.MaxQuerySeriesKept)
	data, err := ConfigMapData(r, DashboardOptions{}, HTMLOptions{})
	if err != nil {
		t.Fatalf("the report was refused: %v", err)
	}
	if size := dataSize(data); size > MaxConfigMapBytes {
		t.Fatalf("the report holds %d bytes, more than %d", size, MaxConfigMapBytes)
	}
	got, err := ParseJSON([]byte(data[KeyJSON]))
	if err != nil {
		t.Fatal(err)
	}
	q := got.Queries[0]
	if len(q.Series) >= analysis.MaxQuerySeriesKept || q.SeriesDropped != 3000+analysis.MaxQuerySeriesKept-len(q.Series) {
		t.Errorf("results.json: %d series listed, %d dropped", len(q.Series), q.SeriesDropped)
	}
	for _, want := range []string{"largest series of each custom query are listed", fmt.Sprintf("| q00 | %d series", 3000+analysis.MaxQuerySeriesKept)} {
		if !strings.Contains(data[KeyMarkdown], want) {
			t.Errorf("report.md does not say %q", want)
		}
	}
}
