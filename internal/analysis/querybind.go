package analysis

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/common/model"
	promlabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Labels a custom query is bound by: cAdvisor's and kube-state-metrics' series carry the
// namespace of what they describe; k6's carry the run's test id and no namespace.
const (
	labelNamespace = "namespace"
	labelTestID    = "testid"
)

// rangeSlack is how far before the run's start a custom query may reach: rate(x[5m]) on a
// one-minute run is a common way to write a rate, and reads only five minutes of the same
// series.
const rangeSlack = 5 * time.Minute

// QueryScope is what a custom query may read. A custom query's series go into the status and
// the report, which the experiment's author reads; without a scope any author could copy any
// tenant's series (test ids, pod names, images, Secret metadata from kube-state-metrics) into
// their own report.
type QueryScope struct {
	// Namespace is the experiment's target namespace: every selector reads its series only.
	Namespace string
	// TestID is the run's test id: a selector with testid="<TestID>" reads the run's k6 series,
	// which carry no namespace.
	TestID string
	// MaxReach bounds how far back from the evaluation time one selector or subquery reads
	// (range plus offset): the run's window plus rangeSlack. Zero leaves it unbounded.
	MaxReach time.Duration
	// Unbound lifts the namespace and test id binding for namespaces the operator's admin
	// trusts (--unbound-query-namespaces); the reach stays bounded.
	Unbound bool
}

// QueryScopeFor is the scope of a run whose window is [start, end].
func QueryScopeFor(namespace, testID string, start, end time.Time, unbound bool) QueryScope {
	return QueryScope{Namespace: namespace, TestID: testID, MaxReach: end.Sub(start) + rangeSlack, Unbound: unbound}
}

// queryScope is what the run's custom queries may read.
func (in Input) queryScope() QueryScope {
	return QueryScopeFor(in.TargetNamespace, in.TestID, in.Start, in.End, in.QueriesUnbound)
}

// errUnbound is wrapped by every refusal of BindQuery.
var errUnbound = errors.New("the query reads outside the experiment")

// BindQuery parses a rendered custom query and returns it with namespace="<Namespace>" added
// to every selector that has neither that matcher nor testid="<TestID>", in the manner of
// prom-label-proxy. A selector that matches another namespace or test id, or any namespace or
// test id by regular expression or inequality, is refused, as is a selector or subquery
// reaching further back than MaxReach or pinned with @ to a time.
func BindQuery(query string, s QueryScope) (string, error) {
	expr, err := parser.ParseExpr(query)
	if err != nil {
		// Prometheus would refuse it too; its own message says where.
		return "", fmt.Errorf("the query does not parse: %w", err)
	}
	var bindErr error
	parser.Inspect(expr, func(node parser.Node, path []parser.Node) error {
		if bindErr != nil {
			return bindErr
		}
		switch n := node.(type) {
		case *parser.VectorSelector:
			bindErr = s.bindSelector(n, rangeOf(path))
		case *parser.SubqueryExpr:
			bindErr = s.checkReach(n.String(), n.Range+n.OriginalOffset, n.Timestamp)
		}
		return bindErr
	})
	if bindErr != nil {
		return "", bindErr
	}
	return expr.String(), nil
}

// rangeOf is the range of the matrix selector a vector selector sits in, if any.
func rangeOf(path []parser.Node) time.Duration {
	if len(path) == 0 {
		return 0
	}
	if m, ok := path[len(path)-1].(*parser.MatrixSelector); ok {
		return m.Range
	}
	return 0
}

func (s QueryScope) bindSelector(vs *parser.VectorSelector, rng time.Duration) error {
	if err := s.checkReach(vs.String(), rng+vs.OriginalOffset, vs.Timestamp); err != nil {
		return err
	}
	if s.Unbound {
		return nil
	}
	var ns, tid *promlabels.Matcher
	for _, m := range vs.LabelMatchers {
		switch m.Name {
		case labelNamespace:
			if ns != nil || m.Type != promlabels.MatchEqual || m.Value != s.Namespace {
				return s.refuse(vs, fmt.Sprintf("it matches %s", m))
			}
			ns = m
		case labelTestID:
			if tid != nil || m.Type != promlabels.MatchEqual || m.Value != s.TestID {
				return s.refuse(vs, fmt.Sprintf("it matches %s", m))
			}
			tid = m
		}
	}
	if ns == nil && tid == nil {
		vs.LabelMatchers = append(vs.LabelMatchers, promlabels.MustNewMatcher(promlabels.MatchEqual, labelNamespace, s.Namespace))
	}
	return nil
}

func (s QueryScope) refuse(vs *parser.VectorSelector, why string) error {
	return fmt.Errorf("%w: selector %s: %s; a custom query reads the series of namespace %q (namespace=\"%s\" is added to every selector) or the run's k6 series (testid=\"%s\", {{.TestID}}), nothing else",
		errUnbound, clip(vs.String(), 200), why, s.Namespace, s.Namespace, s.TestID)
}

// checkReach refuses a selector or subquery that reads further back than MaxReach from the
// evaluation time, or at a fixed time: either could read long before the run.
func (s QueryScope) checkReach(what string, reach time.Duration, at *int64) error {
	if at != nil {
		return fmt.Errorf("%w: %s is pinned with @ to a time; a custom query is evaluated at the end of the run's window and reads back from there", errUnbound, clip(what, 200))
	}
	if s.MaxReach > 0 && (reach > s.MaxReach || reach < -s.MaxReach) {
		return fmt.Errorf("%w: %s reads %s back (range and offset), more than the run's window plus %s (%s); use {{.Window}}",
			errUnbound, clip(what, 200), model.Duration(reach), model.Duration(rangeSlack), model.Duration(s.MaxReach))
	}
	return nil
}
