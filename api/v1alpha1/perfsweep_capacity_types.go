package v1alpha1

// SweepCapacity makes a sweep a capacity search: instead of arms, the sweep probes the
// template's load at levels it chooses one after another (doubling from min until the
// objectives break, then bisecting), and reports the highest load at which every objective in
// template.analysis.objectives still held.
// +kubebuilder:validation:XValidation:rule="self.min < self.max",message="capacity.min must be below capacity.max"
type SweepCapacity struct {
	// parameter is the load setting the search varies: VUs (the virtual users of every
	// vus-with-duration scenario) or Rate (the iterations per timeUnit of every arrivalRate
	// scenario).
	// +required
	Parameter LoadParameter `json:"parameter"`

	// min is the load of the first probe, the lowest the search tries.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	Min int32 `json:"min"`

	// max is the highest load the search tries; when the objectives still hold there, the
	// capacity is reported as at least max.
	// +required
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=1000000
	Max int32 `json:"max"`

	// resolutionPercent is how close the answer must be: the search bisects until the lowest
	// load that broke the objectives is within half this much of the highest that held, so the
	// reported capacity is within it of the true one (docs/capacity.md).
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=100
	ResolutionPercent int32 `json:"resolutionPercent,omitempty"`

	// maxProbes is the most load levels the search probes; it stops with the bracket it has
	// when they are spent.
	// +optional
	// +kubebuilder:default=12
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=30
	MaxProbes int32 `json:"maxProbes,omitempty"`

	// maxRepeats is the most runs of one probe: a probe whose objectives are not yet clearly
	// met or missed runs again, up to this many times; still undecided, it counts as not held.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	MaxRepeats int32 `json:"maxRepeats,omitempty"`

	// variant is what every probe changes in the environment (a PerfExperiment's spec.variant),
	// e.g. no CPU limits; omit it to search the environment as it is. Two searches, with and
	// without a variant, compare capacities.
	// +optional
	Variant *Variant `json:"variant,omitempty"`
}

// CapacityProbeOutcome is what a probe showed about the objectives at its load.
// +kubebuilder:validation:Enum=Held;Broke;Undecided
type CapacityProbeOutcome string

// The outcomes of a capacity probe.
const (
	// ProbeHeld: every objective's interval over the probe's runs lies within its bound.
	ProbeHeld CapacityProbeOutcome = "Held"
	// ProbeBroke: an objective's interval lies wholly beyond its bound.
	ProbeBroke CapacityProbeOutcome = "Broke"
	// ProbeUndecided: the repeat budget was spent with an objective still straddling its
	// bound, or without a run that left valid results; the search counts it as not held.
	ProbeUndecided CapacityProbeOutcome = "Undecided"
)

// CapacityProbeStatus is one load level of a capacity search.
type CapacityProbeStatus struct {
	// load is the probe's VUs or rate.
	Load int32 `json:"load"`
	// runs is how many runs the probe has so far.
	Runs int32 `json:"runs"`
	// outcome is empty while the probe runs.
	// +optional
	Outcome CapacityProbeOutcome `json:"outcome,omitempty"`
	// message says why, in one line.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// SweepCapacityStatus is a capacity search's progress and answer.
type SweepCapacityStatus struct {
	// probes in the order they ran.
	// +optional
	// +kubebuilder:validation:MaxItems=30
	Probes []CapacityProbeStatus `json:"probes,omitempty"`
	// lastHeld is the highest load that held below firstBroken: the capacity.
	// +optional
	LastHeld *int32 `json:"lastHeld,omitempty"`
	// firstBroken is the lowest load that did not hold (Broke or Undecided).
	// +optional
	FirstBroken *int32 `json:"firstBroken,omitempty"`
	// summary is the answer in a few words, for kubectl get ("48-50 VUs", ">= 200 VUs").
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Summary string `json:"summary,omitempty"`
	// limitingFactor is what broke first at firstBroken: the objective furthest beyond its
	// bound and, where the results show one, the most throttled or most loaded workload.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	LimitingFactor string `json:"limitingFactor,omitempty"`
	// stopReason says why the search ended.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	StopReason string `json:"stopReason,omitempty"`
}
