// Package metrics holds perfexp's own Prometheus metrics about experiments, served on the
// manager's metrics endpoint (controller-runtime's registry). The reconciler calls Record once
// per reconcile, after its status write succeeded; every series is derived from the status
// before and after that write, so nothing else in the operator needs to know about metrics.
// docs/metrics.md lists the metrics and what they mean.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

const namespace = "perfexp"

// Label names shared by several metrics.
const (
	labelPhase  = "phase"
	labelQueue  = "queue"
	labelResult = "result"
	labelName   = "name"
	labelNS     = "namespace"
	labelTestID = "testid"
)

// durationBuckets span seconds (a quick restore) to a day (a soak test): phases of perfexp
// last from moments to many hours.
var durationBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800, 86400}

// Recorder keeps the metrics. Gauges are computed at scrape time from the last status seen of
// every experiment, so an experiment that is gone leaves no stale series behind.
type Recorder struct {
	mu          sync.Mutex
	experiments map[types.NamespacedName]experiment

	phaseDuration   *prometheus.HistogramVec
	queueWait       *prometheus.HistogramVec
	restores        *prometheus.CounterVec
	restoreDuration *prometheus.HistogramVec
	analysisSeconds *prometheus.HistogramVec

	byPhase     *prometheus.Desc
	queueLength *prometheus.Desc
	info        *prometheus.Desc
	verdict     *prometheus.Desc
	sweepRun    *prometheus.Desc
}

// experiment is what the gauges need of one experiment.
type experiment struct {
	phase, queue, testID, variant string
	// verdict is status.verdict; sweep, arm and repeat the labels of a sweep's run.
	verdict, sweep, arm, repeat string
}

// New returns a Recorder whose collectors are not registered anywhere yet.
func New() *Recorder {
	return &Recorder{
		experiments: map[types.NamespacedName]experiment{},
		phaseDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "experiment_phase_duration_seconds",
			Help:    "Time experiments spent in a phase, observed when they leave it.",
			Buckets: durationBuckets,
		}, []string{labelPhase, labelQueue}),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "queue_wait_seconds",
			Help:    "Time experiments waited in their queue (phase Queued) before they took the environment.",
			Buckets: durationBuckets,
		}, []string{labelQueue}),
		restores: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "restores_total",
			Help: "Environment restores finished, by result (restored: EnvironmentRestored True; failed: otherwise).",
		}, []string{labelQueue, labelResult}),
		restoreDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "restore_duration_seconds",
			Help:    "Time restores took: from entering Restoring to leaving it.",
			Buckets: durationBuckets,
		}, []string{labelQueue}),
		analysisSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "analysis_duration_seconds",
			Help:    "Time analyses took: from entering Analyzing to the experiment's end, by the phase it ended in.",
			Buckets: durationBuckets,
		}, []string{labelQueue, labelResult}),
		byPhase: prometheus.NewDesc(namespace+"_experiments",
			"Experiments the operator knows, by phase and queue.", []string{labelPhase, labelQueue}, nil),
		queueLength: prometheus.NewDesc(namespace+"_queue_length",
			"Experiments waiting in a queue (phase Pending or Queued).", []string{labelQueue}, nil),
		info: prometheus.NewDesc(namespace+"_experiment_info",
			"1 for every experiment between leaving its queue and its end; its labels annotate dashboards.",
			[]string{labelNS, labelName, labelTestID, "variant", labelPhase, labelQueue}, nil),
		verdict: prometheus.NewDesc(namespace+"_experiment_verdict",
			"1 for every ended experiment with a verdict, until it is deleted; for dashboards listing recent results.",
			[]string{labelNS, labelName, labelTestID, "variant", labelPhase, labelQueue, "verdict"}, nil),
		sweepRun: prometheus.NewDesc(namespace+"_sweep_run_info",
			"1 for every experiment of a sweep once it has a test id, until it is deleted; joins a sweep's arms to their k6 samples.",
			[]string{labelNS, "sweep", "arm", "repeat", labelName, labelTestID}, nil),
	}
}

// Default is the Recorder registered with controller-runtime's registry, served on the
// manager's metrics endpoint.
var Default = New()

func init() {
	ctrlmetrics.Registry.MustRegister(Default)
}

// Record is Default.Record.
func Record(before, after *perfexpv1alpha1.PerfExperiment, queue string) {
	Default.Record(before, after, queue)
}

// Record updates the metrics from one reconcile of an experiment: before is the status the
// reconcile started from, after the one it wrote (successfully: a failed write is retried and
// would count its transitions twice). queue is the experiment's resolved queue.
func (r *Recorder) Record(before, after *perfexpv1alpha1.PerfExperiment, queue string) {
	key := types.NamespacedName{Namespace: after.Namespace, Name: after.Name}
	r.mu.Lock()
	if gone(after) {
		delete(r.experiments, key)
	} else {
		e := experiment{phase: string(phaseOf(after)), queue: queue, testID: after.Status.TestID}
		if after.Spec.Variant != nil {
			e.variant = after.Spec.Variant.Description
		}
		e.verdict = string(after.Status.Verdict)
		e.sweep = after.Labels[perfexpv1alpha1.LabelSweep]
		e.arm = after.Labels[perfexpv1alpha1.LabelArm]
		e.repeat = after.Labels[perfexpv1alpha1.LabelRepeat]
		r.experiments[key] = e
	}
	r.mu.Unlock()

	// A queue's counters and histograms are written at zero from its first experiment on:
	// increase() over a range loses the first value of a series, so a series born at its first
	// observation would never count it.
	r.queueWait.WithLabelValues(queue)
	r.restoreDuration.WithLabelValues(queue)
	r.restores.WithLabelValues(queue, "restored")
	r.restores.WithLabelValues(queue, "failed")

	for _, d := range leftPhases(before.Status.PhaseHistory, after.Status.PhaseHistory) {
		r.phaseDuration.WithLabelValues(string(d.phase), queue).Observe(d.seconds)
		switch d.phase {
		case perfexpv1alpha1.PhaseQueued:
			r.queueWait.WithLabelValues(queue).Observe(d.seconds)
		case perfexpv1alpha1.PhaseRestoring:
			result := "failed"
			if conditionTrue(after, perfexpv1alpha1.ConditionEnvironmentRestored) {
				result = "restored"
			}
			r.restores.WithLabelValues(queue, result).Inc()
			r.restoreDuration.WithLabelValues(queue).Observe(d.seconds)
		case perfexpv1alpha1.PhaseAnalyzing:
			r.analysisSeconds.WithLabelValues(queue, string(d.next)).Observe(d.seconds)
		}
	}
}

// Forget is Default.Forget.
func Forget(key types.NamespacedName, getErr error) {
	Default.Forget(key, getErr)
}

// Forget drops an experiment from the gauges when reading it found it gone (getErr is
// NotFound): experiments deleted without a finalizer (queued or finished ones) are never seen
// with a deletion timestamp. Any other error, or none, changes nothing.
func (r *Recorder) Forget(key types.NamespacedName, getErr error) {
	if !apierrors.IsNotFound(getErr) {
		return
	}
	r.mu.Lock()
	delete(r.experiments, key)
	r.mu.Unlock()
}

// gone is true once the operator has let go of a deleted experiment (its finalizer removed):
// the API server deletes it right after this reconcile.
func gone(exp *perfexpv1alpha1.PerfExperiment) bool {
	if exp.DeletionTimestamp.IsZero() {
		return false
	}
	for _, f := range exp.Finalizers {
		if f == perfexpv1alpha1.Finalizer {
			return false
		}
	}
	return true
}

func phaseOf(exp *perfexpv1alpha1.PerfExperiment) perfexpv1alpha1.Phase {
	if exp.Status.Phase == "" {
		return perfexpv1alpha1.PhasePending
	}
	return exp.Status.Phase
}

func conditionTrue(exp *perfexpv1alpha1.PerfExperiment, typ string) bool {
	for _, c := range exp.Status.Conditions {
		if c.Type == typ {
			return c.Status == "True"
		}
	}
	return false
}

// left is one phase an experiment left, how long it stayed, and where it went.
type left struct {
	phase, next perfexpv1alpha1.Phase
	seconds     float64
}

// leftPhases are the phases left between two phase histories: after's entries that before
// does not hold each end the phase before them. The history is capped (oldest entries
// dropped), so before's last entry is looked up in after rather than counted by position.
func leftPhases(before, after []perfexpv1alpha1.PhaseTransition) []left {
	start := 0
	if n := len(before); n > 0 {
		last := before[n-1]
		start = -1
		for i := len(after) - 1; i >= 0; i-- {
			if after[i].Phase == last.Phase && after[i].Time.Equal(&last.Time) {
				start = i
				break
			}
		}
		if start < 0 {
			return nil // an unrelated history (the object was recreated): nothing to attribute
		}
	}
	var out []left
	for i := start + 1; i < len(after); i++ {
		if i == 0 {
			continue
		}
		prev := after[i-1]
		out = append(out, left{phase: prev.Phase, next: after[i].Phase,
			seconds: max(after[i].Time.Sub(prev.Time.Time), time.Duration(0)).Seconds()})
	}
	return out
}

// Describe implements prometheus.Collector.
func (r *Recorder) Describe(ch chan<- *prometheus.Desc) {
	r.phaseDuration.Describe(ch)
	r.queueWait.Describe(ch)
	r.restores.Describe(ch)
	r.restoreDuration.Describe(ch)
	r.analysisSeconds.Describe(ch)
	ch <- r.byPhase
	ch <- r.queueLength
	ch <- r.info
	ch <- r.verdict
	ch <- r.sweepRun
}

// Collect implements prometheus.Collector.
func (r *Recorder) Collect(ch chan<- prometheus.Metric) {
	r.phaseDuration.Collect(ch)
	r.queueWait.Collect(ch)
	r.restores.Collect(ch)
	r.restoreDuration.Collect(ch)
	r.analysisSeconds.Collect(ch)

	type phaseQueue struct{ phase, queue string }
	byPhase := map[phaseQueue]int{}
	waiting := map[string]int{}
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, e := range r.experiments {
		byPhase[phaseQueue{e.phase, e.queue}]++
		switch perfexpv1alpha1.Phase(e.phase) {
		case perfexpv1alpha1.PhasePending, perfexpv1alpha1.PhaseQueued:
			waiting[e.queue]++
		case perfexpv1alpha1.PhaseSucceeded, perfexpv1alpha1.PhaseFailed, perfexpv1alpha1.PhaseAborted:
			if e.verdict != "" {
				ch <- prometheus.MustNewConstMetric(r.verdict, prometheus.GaugeValue, 1,
					key.Namespace, key.Name, e.testID, e.variant, e.phase, e.queue, e.verdict)
			}
		default:
			ch <- prometheus.MustNewConstMetric(r.info, prometheus.GaugeValue, 1,
				key.Namespace, key.Name, e.testID, e.variant, e.phase, e.queue)
		}
		if e.sweep != "" && e.testID != "" {
			ch <- prometheus.MustNewConstMetric(r.sweepRun, prometheus.GaugeValue, 1,
				key.Namespace, e.sweep, e.arm, e.repeat, key.Name, e.testID)
		}
		if _, ok := waiting[e.queue]; !ok {
			waiting[e.queue] = 0 // a queue with experiments but none waiting reports 0
		}
	}
	for pq, n := range byPhase {
		ch <- prometheus.MustNewConstMetric(r.byPhase, prometheus.GaugeValue, float64(n), pq.phase, pq.queue)
	}
	for q, n := range waiting {
		ch <- prometheus.MustNewConstMetric(r.queueLength, prometheus.GaugeValue, float64(n), q)
	}
}
