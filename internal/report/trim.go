package report

import (
	"fmt"
	"math"
	"sort"
	"unicode/utf8"

	"github.com/perfexp/perfexp/internal/result"
)

// MaxConfigMapBytes is how much report text one ConfigMap may hold: the API server refuses
// objects over 1 MiB, and the rest is left for the object's metadata.
const MaxConfigMapBytes = 900 * 1024

// trimStep is one way of making the report smaller: the request names kept per scenario and
// the series kept per custom query (-1 keeps them all), and, in the last, only the documents
// that hold the numbers (report.md and results.json) with every note shortened.
type trimStep struct {
	requests, series int
	lean             bool
}

// trimSteps are tried in turn until the report fits. Requests are listed most frequent first
// and a custom query's series largest first, so what is cut is the least.
var trimSteps = []trimStep{
	{requests: -1, series: -1}, {requests: 500, series: -1}, {requests: 100, series: -1}, {requests: 20, series: -1},
	{requests: 20, series: 10}, {requests: 20, series: 0}, {requests: 20, series: 0, lean: true},
}

// maxLeanNote is how much of each note the lean report keeps.
const maxLeanNote = 1024

// ConfigMapData renders the report's documents (report.md, results.json, dashboard.json,
// report.html) as the data of its ConfigMap. When they would not fit, request names beyond the
// most frequent and custom query series beyond the largest are left out of every document,
// then the page and the dashboard, and the report says so: a run's numbers are published
// whatever its request names, labels and notes. It fails only when even the lean report
// (report.md and results.json, 20 names per scenario, no series) does not fit.
func ConfigMapData(r *result.Result, dash DashboardOptions, page HTMLOptions) (map[string]string, error) {
	for _, step := range trimSteps {
		rr := r
		if step.requests >= 0 {
			rr = TrimRequests(rr, step.requests)
		}
		if step.series >= 0 {
			rr = TrimQuerySeries(rr, step.series)
		}
		var data map[string]string
		var err error
		if step.lean {
			data, err = leanDocuments(rr)
		} else {
			data, err = documents(rr, dash, page)
		}
		if err != nil {
			return nil, err
		}
		if dataSize(data) <= MaxConfigMapBytes {
			return data, nil
		}
	}
	return nil, fmt.Errorf("the report does not fit a ConfigMap even with %d request names per scenario, no custom query series and only report.md and results.json", trimSteps[len(trimSteps)-1].requests)
}

// leanDocuments are report.md and results.json alone, every note shortened to maxLeanNote
// bytes, with a note saying what was left out.
func leanDocuments(r *result.Result) (map[string]string, error) {
	c := *r
	c.Notes = make([]string, 0, len(r.Notes)+1)
	for _, n := range r.Notes {
		if len(n) > maxLeanNote {
			cut := maxLeanNote
			for cut > 0 && !utf8.RuneStart(n[cut]) {
				cut--
			}
			n = n[:cut] + "..."
		}
		c.Notes = append(c.Notes, n)
	}
	c.Notes = append(c.Notes, fmt.Sprintf("report.html and dashboard.json were left out and the notes cut to %d bytes: the full report does not fit a ConfigMap", maxLeanNote))
	js, err := JSON(&c)
	if err != nil {
		return nil, err
	}
	return map[string]string{KeyMarkdown: Markdown(&c), KeyJSON: string(js)}, nil
}

func documents(r *result.Result, dash DashboardOptions, pageOpts HTMLOptions) (map[string]string, error) {
	js, err := JSON(r)
	if err != nil {
		return nil, err
	}
	dashboard, err := DashboardWith(r, dash)
	if err != nil {
		return nil, err
	}
	page, err := HTML(r, pageOpts)
	if err != nil {
		return nil, err
	}
	return map[string]string{KeyMarkdown: Markdown(r), KeyJSON: string(js), KeyDashboard: string(dashboard), KeyHTML: page}, nil
}

func dataSize(data map[string]string) int {
	size := 0
	for _, v := range data {
		size += len(v)
	}
	return size
}

// TrimRequests returns a copy of r that lists at most keep request names per scenario, in the
// whole window and in every slice of it, with a note saying so when the whole window's list was
// cut. r is left as it was.
func TrimRequests(r *result.Result, keep int) *result.Result {
	c := *r
	c.Scenarios = make([]result.ScenarioResult, len(r.Scenarios))
	trimmed := false
	for i, s := range r.Scenarios {
		if len(s.Requests) > keep {
			s.Requests = s.Requests[:keep]
			trimmed = true
		}
		c.Scenarios[i] = s
	}
	c.Slices = nil
	for _, sl := range r.Slices {
		sc := sl
		sc.Scenarios = make([]result.ScenarioResult, len(sl.Scenarios))
		for i, s := range sl.Scenarios {
			if len(s.Requests) > keep {
				s.Requests = s.Requests[:keep]
			}
			sc.Scenarios[i] = s
		}
		c.Slices = append(c.Slices, sc)
	}
	if trimmed {
		c.Notes = append(append([]string(nil), r.Notes...), fmt.Sprintf("only the %d most frequent request names per scenario are listed: the full list does not fit a ConfigMap", keep))
	}
	return &c
}

// TrimQuerySeries returns a copy of r that lists at most keep series of each custom query, the
// largest values, in the whole window and in every slice,
// counting the rest in SeriesDropped, with a note when a list was cut. r is left as it was.
func TrimQuerySeries(r *result.Result, keep int) *result.Result {
	c := *r
	trimmed := false
	trim := func(qs []result.QueryResult) []result.QueryResult {
		if qs == nil {
			return nil
		}
		out := make([]result.QueryResult, len(qs))
		for i, q := range qs {
			if len(q.Series) > keep {
				q.Series = largestSeries(q.Series, keep)
				q.SeriesDropped += len(qs[i].Series) - keep
				trimmed = true
			}
			out[i] = q
		}
		return out
	}
	c.Queries = trim(r.Queries)
	c.Slices = nil
	for _, sl := range r.Slices {
		sl.Queries = trim(sl.Queries)
		c.Slices = append(c.Slices, sl)
	}
	if trimmed {
		c.Notes = append(append([]string(nil), r.Notes...), fmt.Sprintf("only the %d largest series of each custom query are listed: the full lists do not fit a ConfigMap", keep))
	}
	return &c
}

// largestSeries keeps the keep series of the largest values, in their order.
func largestSeries(series []result.QuerySeries, keep int) []result.QuerySeries {
	idx := make([]int, len(series))
	for i := range idx {
		idx[i] = i
	}
	value := func(i int) float64 {
		if v := series[i].Value; v != nil && !math.IsNaN(*v) {
			return *v
		}
		return math.Inf(-1)
	}
	sort.SliceStable(idx, func(a, b int) bool { return value(idx[a]) > value(idx[b]) })
	idx = idx[:keep]
	sort.Ints(idx)
	out := make([]result.QuerySeries, keep)
	for i, j := range idx {
		out[i] = series[j]
	}
	return out
}
