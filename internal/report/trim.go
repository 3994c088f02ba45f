package report

import (
	"fmt"

	"github.com/perfexp/perfexp/internal/analysis/result"
)

// MaxConfigMapBytes is how much report text one ConfigMap may hold: the API server refuses
// objects over 1 MiB, and the rest is left for the object's metadata.
const MaxConfigMapBytes = 900 * 1024

// trimSteps are the request names per scenario kept when the full report does not fit, tried
// in turn; -1 keeps every name. Requests are listed most frequent first, so the names cut are
// the rarest.
var trimSteps = []int{-1, 500, 100, 20}

// ConfigMapData renders the report's documents (report.md, results.json, dashboard.json,
// report.html) as the data of its ConfigMap. When they would not fit, request names beyond the
// most frequent are left out of every document, and the report says so; it fails only when
// even the last step does not fit.
func ConfigMapData(r *result.Result, dash DashboardOptions, page HTMLOptions) (map[string]string, error) {
	for _, keep := range trimSteps {
		rr := r
		if keep >= 0 {
			rr = TrimRequests(r, keep)
		}
		data, err := documents(rr, dash, page)
		if err != nil {
			return nil, err
		}
		if dataSize(data) <= MaxConfigMapBytes {
			return data, nil
		}
	}
	return nil, fmt.Errorf("the report does not fit a ConfigMap even with %d request names per scenario", trimSteps[len(trimSteps)-1])
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
