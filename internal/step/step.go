// Package step defines what one step of an experiment (applying a variant, running load,
// analysing results) reports back to the reconciler that drives the experiment's phases.
// Steps are called again and again until they are done, so every step must be idempotent:
// it looks at the cluster and the experiment's status, does what is missing and reports.
package step

import (
	"fmt"
	"time"
)

// Result is the outcome of one call of a step.
type Result struct {
	// Done is true when the step has finished and the experiment may move on.
	Done bool
	// RequeueAfter asks for the next call after this long when the step is not done. Watches
	// on the objects the step created may call it earlier.
	RequeueAfter time.Duration
	// Waiting says, for conditions and timeouts, what the step is waiting for.
	Waiting string
	// Failure ends the experiment: load is stopped, the environment restored and the
	// experiment marked Failed with this reason and message.
	Failure *Failure
}

// Failure is a permanent failure of a step.
type Failure struct {
	// Reason is a CamelCase condition reason (see the Reason* constants of the API).
	Reason string
	// Message says what went wrong, for a person.
	Message string
}

// Error implements error so a Failure can travel through error-returning helpers.
func (f *Failure) Error() string { return f.Reason + ": " + f.Message }

// Done reports a finished step.
func Done() Result { return Result{Done: true} }

// Wait reports a step that waits for something, to be called again after d.
func Wait(d time.Duration, format string, args ...any) Result {
	return Result{RequeueAfter: d, Waiting: fmt.Sprintf(format, args...)}
}

// Fail reports a permanent failure.
func Fail(reason, format string, args ...any) Result {
	return Result{Failure: &Failure{Reason: reason, Message: fmt.Sprintf(format, args...)}}
}
