package result

// RunnerUse is what one k6 pod used during the measured window, read from cAdvisor: the size a
// user gives the runner pods, and whether k6 itself became the bottleneck.
type RunnerUse struct {
	Pod string `json:"pod"`
	// CPUAvg and CPUMax are cores (mean and highest of the per-step rates); MemoryMax is the
	// highest working set, bytes.
	CPUAvg    float64 `json:"cpuAvg"`
	CPUMax    float64 `json:"cpuMax"`
	MemoryMax float64 `json:"memoryMax"`
	// ThrottledPercent is throttled CFS periods as a share of all, nil without a CPU limit.
	ThrottledPercent *float64 `json:"throttledPercent,omitempty"`
}
