package controllers

import (
	"errors"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func TestCheckBaselineChain(t *testing.T) {
	// experiments maps each existing experiment to the baseline it names ("" for none).
	experiments := map[string]string{
		"base": "", "v1": "base", "v2": "v1", "orphan": "gone",
		"a": "b", "b": "a", "c": "d", "d": "e", "e": "c", "loop-head": "c",
	}
	tests := []struct {
		name, self, first string
		wantReason        string
		wantMessage       string
	}{
		{name: "a baseline without its own", self: "new", first: "base"},
		{name: "a chain that ends", self: "new", first: "v2"},
		{name: "a chain whose far end is gone only compares less", self: "new", first: "orphan"},
		{name: "a baseline that does not exist", self: "new", first: "typo", wantReason: perfexpv1alpha1.ReasonBaselineNotFound, wantMessage: "spec.baseline names typo, but no PerfExperiment typo exists in namespace ns"},
		{name: "two experiments naming each other", self: "a", first: "b", wantReason: perfexpv1alpha1.ReasonBaselineCycle, wantMessage: "a -> b -> a"},
		{name: "a loop further down the chain", self: "new", first: "loop-head", wantReason: perfexpv1alpha1.ReasonBaselineCycle, wantMessage: "new -> loop-head -> c -> d -> e -> c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := checkBaselineChain("ns", tt.self, tt.first, func(name string) (string, bool, error) {
				next, ok := experiments[name]
				return next, ok, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantReason == "" && (res.Failure != nil || !res.Done):
				t.Fatalf("got %+v, want done", res)
			case tt.wantReason != "" && (res.Failure == nil || res.Failure.Reason != tt.wantReason || !strings.Contains(res.Failure.Message, tt.wantMessage)):
				t.Fatalf("got %+v, want %s with %q", res, tt.wantReason, tt.wantMessage)
			}
		})
	}

	t.Run("a chain longer than the bound is not followed for ever", func(t *testing.T) {
		steps := 0
		res, err := checkBaselineChain("ns", "x", "y", func(string) (string, bool, error) {
			steps++
			return "step" + strings.Repeat("+", steps), true, nil
		})
		if err != nil || res.Failure != nil || steps > maxBaselineChain+1 {
			t.Fatalf("got %+v %v after %d lookups", res, err, steps)
		}
	})

	t.Run("a read error is returned, not taken for a missing baseline", func(t *testing.T) {
		_, err := checkBaselineChain("ns", "x", "y", func(string) (string, bool, error) { return "", false, errors.New("connection refused") })
		if err == nil {
			t.Fatal("no error")
		}
	})
}
