package main

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Exit codes of the plugin, for pipelines (docs/ci.md). 1 is any error (a bad flag, an
// experiment that does not exist, a cluster out of reach); the others say how a watched
// experiment ended.
const (
	exitError        = 1
	exitFail         = 3 // verdict Fail (--fail-on fail)
	exitInvalid      = 4 // verdict Invalid (--fail-on invalid)
	exitRegressed    = 5 // comparison headline Regressed (--fail-on regressed)
	exitInconclusive = 6 // verdict Inconclusive (--fail-on inconclusive)
	exitFailed       = 7 // phase Failed
	exitAborted      = 8 // phase Aborted
	exitTimedOut     = 9 // --timeout passed before the experiment ended
)

// The outcomes --fail-on names.
const (
	outcomeFail         = "fail"
	outcomeInvalid      = "invalid"
	outcomeRegressed    = "regressed"
	outcomeInconclusive = "inconclusive"
)

// outcomeError ends the plugin with a code of its own.
type outcomeError struct {
	code int
	msg  string
}

func (e *outcomeError) Error() string { return e.msg }

// exitCode is the process exit code for an error Execute returned.
func exitCode(err error) int {
	var oe *outcomeError
	if errors.As(err, &oe) {
		return oe.code
	}
	return exitError
}

// failOn is the set of outcomes of a Succeeded experiment that fail watch, in the order they
// are checked: the first that applies gives the exit code.
var failOnOutcomes = []struct {
	name string
	code int
	hit  func(*perfexpv1alpha1.PerfExperiment) bool
}{
	{outcomeFail, exitFail, func(e *perfexpv1alpha1.PerfExperiment) bool { return e.Status.Verdict == perfexpv1alpha1.VerdictFail }},
	{outcomeInvalid, exitInvalid, func(e *perfexpv1alpha1.PerfExperiment) bool {
		return e.Status.Verdict == perfexpv1alpha1.VerdictInvalid
	}},
	{outcomeRegressed, exitRegressed, func(e *perfexpv1alpha1.PerfExperiment) bool {
		return e.Status.Comparison != nil && e.Status.Comparison.Change == perfexpv1alpha1.ChangeRegressed
	}},
	{outcomeInconclusive, exitInconclusive, func(e *perfexpv1alpha1.PerfExperiment) bool {
		return e.Status.Verdict == perfexpv1alpha1.VerdictInconclusive
	}},
}

// parseFailOn reads --fail-on: a comma-separated list of fail, invalid, regressed,
// inconclusive.
func parseFailOn(list []string) (map[string]bool, error) {
	known := map[string]bool{}
	names := make([]string, 0, len(failOnOutcomes))
	for _, o := range failOnOutcomes {
		known[o.name] = true
		names = append(names, o.name)
	}
	out := map[string]bool{}
	for _, v := range list {
		v = strings.ToLower(strings.TrimSpace(v))
		if v == "" {
			continue
		}
		if !known[v] {
			sort.Strings(names)
			return nil, fmt.Errorf("unknown --fail-on outcome %q: use %s", v, strings.Join(names, ", "))
		}
		out[v] = true
	}
	return out, nil
}

// endedError is how an ended experiment ends watch: nil when it Succeeded with no outcome
// --fail-on names, else an outcomeError with the outcome's code.
func endedError(exp *perfexpv1alpha1.PerfExperiment, failOn map[string]bool) error {
	ref := exp.Namespace + "/" + exp.Name
	switch exp.Status.Phase {
	case perfexpv1alpha1.PhaseFailed:
		return &outcomeError{exitFailed, fmt.Sprintf("experiment %s ended Failed: %s", ref, exp.Status.Message)}
	case perfexpv1alpha1.PhaseAborted:
		return &outcomeError{exitAborted, fmt.Sprintf("experiment %s ended Aborted: %s", ref, exp.Status.Message)}
	}
	for _, o := range failOnOutcomes {
		if failOn[o.name] && o.hit(exp) {
			return &outcomeError{o.code, fmt.Sprintf("experiment %s succeeded with verdict %s, comparison %s: --fail-on %s",
				ref, orDash(string(exp.Status.Verdict)), comparisonOf(exp), o.name)}
		}
	}
	return nil
}

func comparisonOf(exp *perfexpv1alpha1.PerfExperiment) string {
	if exp.Status.Comparison == nil || exp.Status.Comparison.Change == "" {
		return "none"
	}
	return string(exp.Status.Comparison.Change)
}

// notFoundIn names the namespace a missing object was looked for in, as kubectl users expect
// to read it; the API error stays underneath (apierrors.IsNotFound still holds).
func notFoundIn(err error, name, namespace string) error {
	if !apierrors.IsNotFound(err) {
		return err
	}
	return &wrapped{msg: fmt.Sprintf("perfexperiment %q not found in namespace %q", name, namespace), err: err}
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// isUnreachable says whether err is a refused or unresolvable connection.
func isUnreachable(err error) bool {
	return err != nil && (utilnet.IsConnectionRefused(err) || isNoSuchHost(err))
}

// unreachable turns a refused or unresolvable connection to the API server into kubectl's
// own message; other errors pass unchanged.
func unreachable(err error, cfg *rest.Config) error {
	if !isUnreachable(err) {
		return err
	}
	host := "the server"
	if cfg != nil && cfg.Host != "" {
		host = "the server " + hostOf(cfg.Host)
	}
	return &wrapped{msg: fmt.Sprintf("The connection to %s was refused - did you specify the right host or port?", host), err: err}
}

func isForbidden(err error) bool { return apierrors.IsForbidden(err) }

func isNoSuchHost(err error) bool {
	return strings.Contains(err.Error(), "no such host")
}

func hostOf(h string) string {
	if u, err := url.Parse(h); err == nil && u.Host != "" {
		return u.Host
	}
	return h
}
