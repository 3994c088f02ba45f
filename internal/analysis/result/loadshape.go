package result

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
