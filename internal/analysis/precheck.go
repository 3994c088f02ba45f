package analysis

import (
	"context"
	"errors"
	"fmt"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// QueryProblem is a custom query that cannot give a result, whatever the data: its template
// does not render, Prometheus refuses to parse it, or it returns a type no report can hold.
type QueryProblem struct {
	// Name of the query.
	Name string
	// Message says what is wrong, in Prometheus' words where it refused the query.
	Message string
}

func (p QueryProblem) String() string { return fmt.Sprintf("query %s: %s", p.Name, p.Message) }

// precheckWindow is the window a query is tried on before the run. Its length does not change
// whether the PromQL is valid, and a short one keeps the trial cheap for Prometheus.
const precheckWindow = time.Minute

// PrecheckData is the template data of a trial run of the queries at now, before the load: the
// experiment's real namespace and test id, and a short window ending at now.
func PrecheckData(namespace, testID string, now time.Time) TemplateData {
	start := now.Add(-precheckWindow)
	return templateData(namespace, testID, start, start, now)
}

// PrecheckScope is the scope of the trial run: the experiment's namespace and test id, with
// no bound on the reach, which depends on the run's window (the analysis checks it).
func PrecheckScope(namespace, testID string, unbound bool) QueryScope {
	return QueryScope{Namespace: namespace, TestID: testID, Unbound: unbound}
}

// CheckQueries renders every custom query and runs it once as an instant query at now, so a
// typo is reported before a long run rather than after it. Only problems that no data could
// change count: a template error, Prometheus' bad_data (a parse or type error), or a result
// that is not a scalar or instant vector. Execution errors depend on the data and are left to
// the analysis. When Prometheus does not answer, the check cannot tell and returns the
// *UnavailableError with the problems found so far; the caller decides whether to go on.
//
// Every query is rendered and bound to scope (BindQuery) before any is sent, so a query that
// reads outside the experiment is refused whether or not Prometheus answers, and is never sent.
func CheckQueries(ctx context.Context, q Querier, queries []perfexpv1alpha1.CustomQuery, data TemplateData, scope QueryScope, now time.Time) ([]QueryProblem, error) {
	var problems []QueryProblem
	bound := make([]string, len(queries))
	for i, spec := range queries {
		rendered, err := renderBound(spec.Query, data, scope)
		if err != nil {
			problems = append(problems, QueryProblem{Name: spec.Name, Message: err.Error()})
			continue
		}
		bound[i] = rendered
	}
	for i, spec := range queries {
		rendered := bound[i]
		if rendered == "" {
			continue
		}
		v, err := customInstant(ctx, q, rendered, now)
		var refused *QueryError
		var apiErr *promv1.Error
		var limit *LimitError
		switch {
		case errors.As(err, &limit):
			// A limit depends on the window's data, which the run has not written yet.
		case errors.As(err, &refused) && errors.As(err, &apiErr) && apiErr.Type == promv1.ErrBadData:
			problems = append(problems, QueryProblem{Name: spec.Name, Message: "Prometheus refused it: " + apiErr.Msg})
		case errors.As(err, &refused):
			// Refused while running, not parsing (many-to-many matching, say): the data
			// decides, and the analysis reports it with the results.
		case err != nil:
			return problems, err
		default:
			qr := result.QueryResult{Name: spec.Name}
			fillQueryResult(&qr, v)
			if qr.Error != "" {
				problems = append(problems, QueryProblem{Name: spec.Name, Message: qr.Error})
			}
		}
	}
	return problems, nil
}
