package result

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// ScenarioShape is the load shape of one scenario: what has to be equal for two runs'
// latencies to be comparable. Two runs at 10 and 20 virtual users answer different questions.
type ScenarioShape struct {
	Name string `json:"name"`
	// Executor is constant-vus, ramping-vus or constant-arrival-rate.
	Executor string `json:"executor"`
	// VUs and Duration for constant-vus; Stages ("30s:10,1m0s:20") for ramping-vus; Rate,
	// TimeUnit, PreAllocatedVUs and MaxVUs for constant-arrival-rate.
	VUs             int32  `json:"vus,omitempty"`
	Duration        string `json:"duration,omitempty"`
	Stages          string `json:"stages,omitempty"`
	Rate            int32  `json:"rate,omitempty"`
	TimeUnit        string `json:"timeUnit,omitempty"`
	PreAllocatedVUs int32  `json:"preAllocatedVUs,omitempty"`
	MaxVUs          int32  `json:"maxVUs,omitempty"`
	Parallelism     int32  `json:"parallelism"`
	StartDelay      string `json:"startDelay,omitempty"`
	// ScriptHash is the SHA-256 of the script's text, "" where it could not be read (a
	// ConfigMap that is gone); an unknown hash is not held against a comparison.
	ScriptHash string `json:"scriptHash,omitempty"`
}

// ScriptHash is the hex SHA-256 of a script's text.
func ScriptHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// LoadShape is the load shape of every scenario of a load, in the declared order. scripts
// maps a scenario name to its script's text where the caller could read it; inline scripts
// are hashed from the spec.
func LoadShape(l perfexpv1alpha1.Load, scripts map[string]string) []ScenarioShape {
	out := make([]ScenarioShape, 0, len(l.Scenarios))
	for _, s := range l.Scenarios {
		sh := ScenarioShape{Name: s.Name, Parallelism: max(s.Parallelism, 1)}
		switch {
		case s.ArrivalRate != nil:
			a := s.ArrivalRate
			sh.Executor, sh.Rate, sh.Duration, sh.PreAllocatedVUs = "constant-arrival-rate", a.Rate, a.Duration.Duration.String(), a.PreAllocatedVUs
			sh.TimeUnit = "1s"
			if a.TimeUnit != nil {
				sh.TimeUnit = a.TimeUnit.Duration.String()
			}
			if a.MaxVUs != nil {
				sh.MaxVUs = *a.MaxVUs
			}
		case len(s.Stages) > 0:
			sh.Executor = "ramping-vus"
			parts := make([]string, 0, len(s.Stages))
			for _, st := range s.Stages {
				parts = append(parts, fmt.Sprintf("%s:%d", st.Duration.Duration, st.Target))
			}
			sh.Stages = strings.Join(parts, ",")
		default:
			sh.Executor = "constant-vus"
			if s.VUs != nil {
				sh.VUs = *s.VUs
			}
			if s.Duration != nil {
				sh.Duration = s.Duration.Duration.String()
			}
		}
		if s.StartDelay != nil && s.StartDelay.Duration > 0 {
			sh.StartDelay = s.StartDelay.Duration.String()
		}
		switch {
		case s.Script.Inline != "":
			sh.ScriptHash = ScriptHash(s.Script.Inline)
		case scripts != nil:
			if text, ok := scripts[s.Name]; ok {
				sh.ScriptHash = ScriptHash(text)
			}
		}
		out = append(out, sh)
	}
	return out
}
