package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultHistoryMaxRecords is how many records a PerfHistory keeps when spec.maxRecords is
// unset. etcd refuses objects over 1.5 MiB (--max-request-bytes): a record of one or two
// scenarios takes 2-4 KiB of JSON, one at every bound below about 11 KiB, so 100 of even the
// largest stay under etcd's limit; the operator also drops the oldest records while the
// object would exceed HistoryMaxBytes.
const DefaultHistoryMaxRecords = 100

// HistoryMaxBytes bounds the JSON size of a PerfHistory the operator writes, with a margin
// under etcd's 1.5 MiB for metadata, acks and the managed-fields bookkeeping.
const HistoryMaxBytes = 1 << 20

// Bounds of one history record, so the object size above holds.
const (
	HistoryMaxScenarios = 6
	HistoryMaxRequests  = 5
	HistoryMaxServices  = 16
	HistoryMaxQueries   = 16
	HistoryMaxImages    = 16
)

// LabelHistoryFingerprint on a PerfHistory holds the first 63 characters of the fingerprint
// of the runs it keeps (also for a history named by spec.analysis.historyKey).
const LabelHistoryFingerprint = "perfexp.dev/fingerprint"

// PerfHistorySpec holds what people decide about a history: how many records it keeps, how
// change points are found, and which detected changes they confirmed or dismissed.
// +kubebuilder:validation:XValidation:rule="!has(self.acks) || self.acks.all(a, self.acks.exists_one(b, b.experiment == a.experiment && (has(a.metric) ? has(b.metric) && a.metric == b.metric : !has(b.metric))))",message="one ack per experiment and metric: edit the existing ack instead"
type PerfHistorySpec struct {
	// maxRecords is how many records the history keeps; the oldest are dropped first. Defaults
	// to 100: a record takes 2-11 KiB and etcd refuses objects over 1.5 MiB. Whatever the
	// bound, the operator also drops the oldest records while the object exceeds 1 MiB.
	// +optional
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=200
	MaxRecords int32 `json:"maxRecords,omitempty"`

	// minMagnitudePercent is the smallest change of a series' mean, in percent of the mean
	// before it, that is reported as a change point. Defaults to 5.
	// +optional
	MinMagnitudePercent *resource.Quantity `json:"minMagnitudePercent,omitempty"`

	// maxPValue is the significance level of change points: the false discovery rate across the
	// history's series (Benjamini-Hochberg), and so the chance of any false change point in a
	// history where nothing changed. The p-values allow for the choice of the split and for
	// autocorrelated runs (AR(1) drift). Defaults to 0.05.
	// +optional
	MaxPValue *resource.Quantity `json:"maxPValue,omitempty"`

	// acks are people's decisions about detected changes (`kubectl perfexp history ack`).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Acks []HistoryAck `json:"acks,omitempty"`
}

// AckDecision is what a person decided about a detected change.
// +kubebuilder:validation:Enum=Confirmed;Dismissed
type AckDecision string

const (
	// AckConfirmed means the change is real (a release made things slower or faster). The run starts a
	// new segment: later changes are looked for against it, not against older runs.
	AckConfirmed AckDecision = "Confirmed"
	// AckDismissed means the change is not worth reporting (a noisy node, a known blip); it is no longer
	// listed.
	AckDismissed AckDecision = "Dismissed"
)

// HistoryAck is a decision about the change that starts at one run.
type HistoryAck struct {
	// experiment is the name of the run where the change starts.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Experiment string `json:"experiment"`

	// uid of that run, to tell apart runs that reused a name; empty matches every run of the name.
	// +optional
	UID types.UID `json:"uid,omitempty"`

	// metric narrows the decision to one series (as `kubectl perfexp history` names it, e.g.
	// checkout/p95); empty means every series that changes at the run.
	// +optional
	// +kubebuilder:validation:MaxLength=320
	Metric string `json:"metric,omitempty"`

	// decision is Confirmed or Dismissed.
	// +required
	Decision AckDecision `json:"decision"`

	// note says why, for the next reader.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Note string `json:"note,omitempty"`

	// time the decision was made.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
}

// HistoryStats are the run-level statistics of a scenario or request name. Numbers are
// decimal strings as in status.results: times in milliseconds, rate in requests per second.
type HistoryStats struct {
	// count is the number of requests.
	// +optional
	Count *int64 `json:"count,omitempty"`
	// errorPercent is the share of failed requests, 0-100.
	// +optional
	ErrorPercent string `json:"errorPercent,omitempty"`
	// avg is the mean response time in milliseconds.
	// +optional
	Avg string `json:"avg,omitempty"`
	// p50 is the median response time in milliseconds.
	// +optional
	P50 string `json:"p50,omitempty"`
	// p95 is the 95th percentile response time in milliseconds.
	// +optional
	P95 string `json:"p95,omitempty"`
	// p99 is the 99th percentile response time in milliseconds.
	// +optional
	P99 string `json:"p99,omitempty"`
	// rate is requests per second.
	// +optional
	Rate string `json:"rate,omitempty"`
}

// HistoryRequest is one request name of a scenario.
type HistoryRequest struct {
	// name is the k6 `name` tag.
	Name         string `json:"name"`
	HistoryStats `json:",inline"`
}

// HistoryScenario is one scenario of a run with its most frequent request names.
type HistoryScenario struct {
	// name of the scenario.
	Name         string `json:"name"`
	HistoryStats `json:",inline"`
	// requests are the scenario's most frequent request names (at most 5).
	// +optional
	Requests []HistoryRequest `json:"requests,omitempty"`
}

// HistoryService is the resource use of one workload during a run.
type HistoryService struct {
	// name is kind/namespace/name of the workload.
	Name string `json:"name"`
	// cpu is the average CPU use in cores.
	// +optional
	CPU string `json:"cpu,omitempty"`
	// memory is the average working set in bytes.
	// +optional
	Memory string `json:"memory,omitempty"`
}

// HistoryValue is a named number: a custom query's value, a workload's image.
type HistoryValue struct {
	// name of the query or workload.
	Name string `json:"name"`
	// value as a string.
	Value string `json:"value"`
}

// HistoryRecord is the compact result of one run.
type HistoryRecord struct {
	// experiment is the run's name; the experiment itself may be gone.
	Experiment string `json:"experiment"`
	// uid of the experiment: a record is written once per uid.
	UID types.UID `json:"uid"`
	// time the run's analysis ended.
	Time metav1.Time `json:"time"`
	// window is when the load ran.
	// +optional
	Window *Window `json:"window,omitempty"`
	// variant is the variant's description.
	// +optional
	Variant string `json:"variant,omitempty"`
	// images are the container images of the workloads the run measured (workload/container).
	// +optional
	Images []HistoryValue `json:"images,omitempty"`
	// validity of the run's results; change points are looked for in Valid runs only.
	// +optional
	Validity Validity `json:"validity,omitempty"`
	// scenarios with their statistics.
	// +optional
	Scenarios []HistoryScenario `json:"scenarios,omitempty"`
	// services are the measured workloads' CPU and memory.
	// +optional
	Services []HistoryService `json:"services,omitempty"`
	// queries are the custom queries' values.
	// +optional
	Queries []HistoryValue `json:"queries,omitempty"`
}

// PerfHistoryStatus holds the records, written by the operator only.
type PerfHistoryStatus struct {
	// fingerprint is the hash of what makes the runs comparable (target namespace, scenario
	// names, script hashes and load shapes, variant), or historyKey:<key> when runs named one.
	// +optional
	Fingerprint string `json:"fingerprint,omitempty"`
	// records in the order the runs ended, oldest first.
	// +optional
	Records []HistoryRecord `json:"records,omitempty"`
	// dropped counts the records removed to stay within the bound.
	// +optional
	Dropped int64 `json:"dropped,omitempty"`
}

// PerfHistory keeps the compact results of comparable runs. It has no owner: it outlives the
// experiments that wrote it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=phist,categories=perfexp
// +kubebuilder:printcolumn:name="Last",type=string,JSONPath=`.status.records[-1:].experiment`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PerfHistory struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the bound, the detection settings and people's acks.
	// +optional
	Spec PerfHistorySpec `json:"spec,omitempty"`

	// status holds the records.
	// +optional
	Status PerfHistoryStatus `json:"status,omitempty"`
}

// PerfHistoryList is a list of PerfHistory.
// +kubebuilder:object:root=true
type PerfHistoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PerfHistory `json:"items"`
}

// MaxRecordsOrDefault is spec.maxRecords, or DefaultHistoryMaxRecords when unset.
func (h *PerfHistory) MaxRecordsOrDefault() int {
	if h.Spec.MaxRecords > 0 {
		return int(h.Spec.MaxRecords)
	}
	return DefaultHistoryMaxRecords
}

// Registered here rather than in groupversion_info.go so the kind lives in one file.
func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &PerfHistory{}, &PerfHistoryList{})
		return nil
	})
}
