package v1alpha1

// AnnotationRestartedAt is the pod-template annotation perfexp sets to roll a workload's pods
// for spec.freshPods, the way `kubectl rollout restart` sets kubectl.kubernetes.io/restartedAt.
// Its value is the experiment's UID; it is recorded in the snapshot like any patched field and
// removed (or put back) when the experiment ends.
const AnnotationRestartedAt = "perfexp.dev/restartedAt"

// FreshPods rolls workloads before the run, so the run measures pods as young as those of a
// compared run whose variant rolled them. A variant's pods are created by its own rollout just
// before its warm-up; without this, the baseline runs on pods as found (long-lived, or created
// by the previous run's restore), and the comparison holds the difference in pod age.
type FreshPods struct {
	// workloads to roll: a pod-template annotation is set, the rollout is waited for as a
	// variant's is (old pods terminated included), and the annotation is restored when the
	// experiment ends. A workload the variant also changes is rolled once.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Workloads []WorkloadSelector `json:"workloads"`
}

// SweepPodAge says whether a sweep's runs start on pods of equal age.
// +kubebuilder:validation:Enum=Equal;AsFound
type SweepPodAge string

const (
	// SweepPodAgeEqual rolls, before every run (the baseline's included), every workload any
	// arm of the sweep changes: every run's pods are created by a rollout just before its
	// warm-up, whatever its arm.
	SweepPodAgeEqual SweepPodAge = "Equal"
	// SweepPodAgeAsFound rolls only what each run's variant changes: the baseline runs on the
	// pods as found.
	SweepPodAgeAsFound SweepPodAge = "AsFound"
)
