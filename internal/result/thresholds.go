package result

// ThresholdResult is one k6 threshold of the script as the runners' end-of-test summaries
// report it: crossed when it failed in at least one runner of the measured load.
type ThresholdResult struct {
	// Metric is the k6 metric the threshold is declared on (http_req_duration, or with tags
	// http_req_duration{scenario:browse}).
	Metric string `json:"metric"`
	// Expression is the threshold as the script declares it (p(95)<500).
	Expression string `json:"expression"`
	// Crossed is true when the threshold failed in a runner.
	Crossed bool `json:"crossed"`
	// Scenarios are the scenarios whose runners reported it crossed.
	Scenarios []string `json:"scenarios,omitempty"`
}

// Name is the threshold as people write it: metric, then expression.
func (t ThresholdResult) Name() string { return t.Metric + " " + t.Expression }
