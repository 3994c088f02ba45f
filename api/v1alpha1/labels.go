package v1alpha1

// Labels and annotations perfexp puts on objects.
const (
	// LabelExperiment names the experiment that created an object (k6 Jobs, ConfigMaps).
	LabelExperiment = "perfexp.dev/experiment"
	// LabelTestID carries the experiment's test ID.
	LabelTestID = "perfexp.dev/testid"
	// LabelScenario names the scenario of a k6 Job.
	LabelScenario = "perfexp.dev/scenario"
	// AnnotationSnapshot holds, on a patched object, the prior value of every field the variant
	// touched, so the object can be restored even if the experiment's status is lost.
	AnnotationSnapshot = "perfexp.dev/snapshot"
	// AnnotationSnapshotSignature holds, beside AnnotationSnapshot, an HMAC of the snapshot and
	// of the object it was written on, with a key kept in the operator's own namespace: the orphan janitor
	// acts only on snapshots perfexp recorded, never on a hand-written annotation.
	AnnotationSnapshotSignature = "perfexp.dev/snapshot-signature"
	// AnnotationExperiment names, on a patched object, the experiment that patched it.
	AnnotationExperiment = "perfexp.dev/patched-by"
	// Finalizer keeps an experiment until its environment is restored and its queue lock freed.
	Finalizer = "perfexp.dev/restore"
)

// LabelAllowExperiments is the label by which a namespace opts in to being patched and read by
// experiments (value "true"). Namespaces in the operator's --allowed-namespaces need no label.
const LabelAllowExperiments = "perfexp.dev/allow-experiments"

// AnnotationQueueMembers on a namespace lists, comma-separated, the other namespaces whose
// experiments may join the queue named like it ("*" for any). A queue named like a namespace is
// that namespace's by default: only experiments targeting it may join it.
const AnnotationQueueMembers = "perfexp.dev/queue-members"
