package v1alpha1

// SweepBisect makes a sweep a performance bisect: given the old (baseline) and new (candidate)
// image of each changed service, it finds the service, or the smallest set of services, whose
// new image makes the system slower, by applying the new images of half of the services at a
// time and comparing with the old release (docs/bisect.md).
// +kubebuilder:validation:XValidation:rule="self.services.all(a, self.services.exists_one(b, b.name == a.name))",message="every service of a bisect is named once"
type SweepBisect struct {
	// services are the changed services, each with its old and new image.
	// +required
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=64
	Services []BisectService `json:"services"`

	// maxRepeats is the most repeats of one step (a repeat is one run with the step's images
	// and one with the old release): a step looks after 3 and after every further repeat
	// until its comparison decides.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=20
	MaxRepeats int32 `json:"maxRepeats,omitempty"`

	// maxSteps is the most steps the bisect takes; it stops with what it established when they
	// are spent. Each step is two arms in status.arms (its images and the old release), so at
	// most 48; and maxSteps x maxRepeats x 2 runs at most 200, the limit of one sweep (the
	// defaults, 10 x 10 x 2, are at it).
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=48
	MaxSteps int32 `json:"maxSteps,omitempty"`
}

// BisectService is one changed service of a bisect: one container of one workload, with its
// image in the baseline release and in the candidate.
type BisectService struct {
	// name of the workload.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// kind of the workload.
	// +optional
	// +kubebuilder:default=Deployment
	Kind WorkloadKind `json:"kind,omitempty"`

	// container whose image changed.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Container string `json:"container"`

	// baseline is the container's image in the release compared with (release N-1).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Baseline string `json:"baseline"`

	// candidate is the container's image in the release under suspicion (release N).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Candidate string `json:"candidate"`
}

// BisectStepOutcome is what one step of a bisect showed.
// +kubebuilder:validation:Enum=Reproduces;Clean;Undecided
type BisectStepOutcome string

// The outcomes of a bisect step.
const (
	// BisectReproduces: the step's new images make the system slower than the old release.
	BisectReproduces BisectStepOutcome = "Reproduces"
	// BisectClean: they were not shown to.
	BisectClean BisectStepOutcome = "Clean"
	// BisectUndecided: the step has no comparison to go by (no valid run).
	BisectUndecided BisectStepOutcome = "Undecided"
)

// BisectStepStatus is one step of a bisect: the services whose new images it applied.
type BisectStepStatus struct {
	// services are the indexes (in spec.bisect.services) of the services whose new image the
	// step applied; the others ran their old image.
	// +kubebuilder:validation:MaxItems=64
	Services []int32 `json:"services"`
	// description names them for people, shortened.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Description string `json:"description,omitempty"`
	// repeats is how many repeats the step has so far.
	Repeats int32 `json:"repeats"`
	// outcome is empty while the step runs.
	// +optional
	Outcome BisectStepOutcome `json:"outcome,omitempty"`
	// message is the step's comparison in one line.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// SweepBisectStatus is a bisect's progress and answer.
type SweepBisectStatus struct {
	// steps in the order they ran.
	// +optional
	// +kubebuilder:validation:MaxItems=48
	Steps []BisectStepStatus `json:"steps,omitempty"`
	// culprits name the services whose new images make the difference.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Culprits []string `json:"culprits,omitempty"`
	// interaction is true when the regression needs several services' new images together.
	// +optional
	Interaction bool `json:"interaction,omitempty"`
	// summary is the answer in a few words, for kubectl get.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Summary string `json:"summary,omitempty"`
	// stopReason says why the bisect ended.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	StopReason string `json:"stopReason,omitempty"`
}
