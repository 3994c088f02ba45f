package main

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func TestEndedError(t *testing.T) {
	ended := func(phase perfexpv1alpha1.Phase, verdict perfexpv1alpha1.Verdict, change perfexpv1alpha1.Change) *perfexpv1alpha1.PerfExperiment {
		e := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: "run"}}
		e.Status.Phase, e.Status.Verdict = phase, verdict
		if change != "" {
			e.Status.Comparison = &perfexpv1alpha1.Comparison{Change: change}
		}
		return e
	}
	all := []string{"fail", "invalid", "regressed", "inconclusive"}
	tests := []struct {
		name   string
		exp    *perfexpv1alpha1.PerfExperiment
		failOn []string
		want   int
	}{
		{"Pass", ended(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictPass, perfexpv1alpha1.ChangeImproved), all, 0},
		{"Fail without --fail-on", ended(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictFail, ""), nil, 0},
		{"Fail", ended(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictFail, ""), all, exitFail},
		{"Invalid", ended(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictInvalid, ""), all, exitInvalid},
		{"Regressed, Pass", ended(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictPass, perfexpv1alpha1.ChangeRegressed), all, exitRegressed},
		{"Regressed and Fail: fail first", ended(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictFail, perfexpv1alpha1.ChangeRegressed), all, exitFail},
		{"Regressed and Fail, only regressed asked", ended(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictFail, perfexpv1alpha1.ChangeRegressed), []string{"regressed"}, exitRegressed},
		{"Inconclusive", ended(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictInconclusive, perfexpv1alpha1.ChangeInconclusive), all, exitInconclusive},
		{"Inconclusive not asked", ended(perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.VerdictInconclusive, ""), []string{"fail"}, 0},
		{"Failed, whatever --fail-on", ended(perfexpv1alpha1.PhaseFailed, "", ""), nil, exitFailed},
		{"Aborted, whatever --fail-on", ended(perfexpv1alpha1.PhaseAborted, "", ""), nil, exitAborted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failOn, err := parseFailOn(tt.failOn)
			if err != nil {
				t.Fatal(err)
			}
			err = endedError(tt.exp, failOn)
			if tt.want == 0 {
				if err != nil {
					t.Errorf("error %v, want none", err)
				}
				return
			}
			if exitCode(err) != tt.want {
				t.Errorf("exit %d (%v), want %d", exitCode(err), err, tt.want)
			}
		})
	}
	if exitCode(errors.New("anything else")) != exitError {
		t.Error("a plain error does not exit 1")
	}
	if _, err := parseFailOn([]string{"fail", " Regressed "}); err != nil {
		t.Errorf("case and spaces: %v", err)
	}
	if _, err := parseFailOn([]string{"slow"}); err == nil || !strings.Contains(err.Error(), "fail, inconclusive, invalid, regressed") {
		t.Errorf("unknown outcome: %v", err)
	}
}
