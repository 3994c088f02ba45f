package controllers

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/sweep"
	"github.com/perfexp/perfexp/internal/testenv"
	"github.com/perfexp/perfexp/internal/testenv/admission"
)

// FuzzSweepSpec checks that a PerfSweep the API server admits only ever stamps out runs the
// API server admits too, and that those runs pass FuzzExperimentSpec's property. A sweep is
// one of the ready manifests (config/samples, scenarios/) changed by the fuzz input: its
// template and its arms' variants with FuzzExperimentSpec's edits, its own fields with
// sweepEdits. Admitted (schema, defaults and CEL in process, as in FuzzExperimentSpec), its
// plan is made as the sweep reconciler makes it (newSweepPlan); a plan it cannot make must be
// refused with a message (the sweep fails with InvalidSweep). Every planned run, as the
// reconciler builds it (Plan.Experiment), must then be admitted by the PerfExperiment CRD: a
// run refused there fails the sweep halfway, after its first runs held the queue and patched
// the environment. A capacity search is planned with probes at both ends of its range, a
// bisect with its first step. The first run, the first run compared with a baseline and the
// last planned run (a capacity search's highest load) then go through runAdmitted.
func FuzzSweepSpec(f *testing.F) {
	seeds := seedSweeps(f)
	for i := range seeds {
		f.Add(uint8(i), []byte{})
	}
	for op := range len(sweepEdits) {
		f.Add(uint8(op%len(seeds)), []byte{byte(op), 0, 1, 2, 3})
	}
	root := testenv.Root()
	sweepCRD, err := admission.Load(filepath.Join(root, "config", "crd", "bases", "perfexp.dev_perfsweeps.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	expCRD, err := admission.Load(filepath.Join(root, "config", "crd", "bases", "perfexp.dev_perfexperiments.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	documented := documentedReasons(f)

	f.Fuzz(func(t *testing.T, seed uint8, edits []byte) {
		sw := seeds[int(seed)%len(seeds)].DeepCopy()
		in := &fuzzInput{b: edits}
		for !in.empty() {
			sweepEdits[in.intn(len(sweepEdits))].apply(sw, in)
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(sw)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if errs := sweepCRD.Create(t.Context(), u); len(errs) > 0 {
			t.Logf("refused: %v", errs.ToAggregate())
			for _, e := range errs {
				if e.Field == "" && e.Detail == "" {
					t.Fatalf("refused without saying why: %#v", e)
				}
			}
			return
		}
		admitted := &perfexpv1alpha1.PerfSweep{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, admitted); err != nil {
			t.Fatalf("the admitted object does not read back: %v", err)
		}
		admitted.UID = types.UID("fuzz-sweep-" + admitted.Name)
		// Whatever the search decides, an admitted sweep stays within the sweep's runs and ends
		// by its deadline.
		if c := admitted.Spec.Capacity; c != nil && int(c.MaxProbes)*int(c.MaxRepeats) > sweep.MaxRuns {
			t.Fatalf("a capacity search of %d probes x %d repeats was admitted, over %d runs", c.MaxProbes, c.MaxRepeats, sweep.MaxRuns)
		}
		if admitted.Spec.Bisect != nil {
			if repeats, steps := sweep.BisectBudget(admitted); steps*repeats*2 > sweep.MaxRuns {
				t.Fatalf("a bisect of %d steps x %d repeats x 2 was admitted, over %d runs", steps, repeats, sweep.MaxRuns)
			}
		}
		if admitted.Spec.Deadline == nil || admitted.Spec.Deadline.Duration > 720*time.Hour {
			t.Fatalf("admitted with deadline %v; every sweep has one of at most 720h", admitted.Spec.Deadline)
		}
		// A capacity search and a bisect plan from their status: give the search a probe at
		// each end of its range (it probes nowhere else) and the bisect its first step, as the
		// reconciler's first advance does.
		if c := admitted.Spec.Capacity; c != nil {
			admitted.Status.Capacity = &perfexpv1alpha1.SweepCapacityStatus{Probes: []perfexpv1alpha1.CapacityProbeStatus{
				{Load: c.Min, Runs: 1, Outcome: perfexpv1alpha1.ProbeHeld}, {Load: c.Max, Runs: 1}}}
		}
		if admitted.Spec.Bisect != nil {
			if p, err := newSweepPlan(admitted); err == nil {
				sweep.AdvanceBisect(admitted, p, nil)
			}
		}
		plan, err := newSweepPlan(admitted)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("the plan was refused without a message")
			}
			t.Logf("plan refused: %v", err)
			return
		}
		var first, compared, last *perfexpv1alpha1.PerfExperiment
		for i, run := range plan.Runs {
			if i == 64 {
				break // every run of a repeat is alike; a long plan adds only time
			}
			exp, err := plan.Experiment(admitted, run)
			if err != nil {
				t.Fatalf("run %s of an admitted sweep cannot be built: %v\nsweep %s", run.Name, err, sweepJSON(admitted))
			}
			ro, err := runtime.DefaultUnstructuredConverter.ToUnstructured(exp)
			if err != nil {
				t.Fatal(err)
			}
			ru := &unstructured.Unstructured{Object: ro}
			ru.SetAPIVersion(perfexpv1alpha1.GroupVersion.String())
			ru.SetKind("PerfExperiment")
			if errs := expCRD.Create(t.Context(), ru); len(errs) > 0 {
				t.Fatalf("run %s of an admitted sweep is refused by the API server: %v\nsweep %s", run.Name, errs.ToAggregate(), sweepJSON(admitted))
			}
			stored := &perfexpv1alpha1.PerfExperiment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ru.Object, stored); err != nil {
				t.Fatal(err)
			}
			last = stored
			switch {
			case first == nil:
				first = stored
			case compared == nil && stored.Spec.Baseline != nil:
				compared = stored
			}
		}
		for _, exp := range []*perfexpv1alpha1.PerfExperiment{first, compared, last} {
			if exp != nil && (exp != last || last != first && last != compared) {
				runAdmitted(t, exp, documented)
			}
		}
	})
}

func sweepJSON(sw *perfexpv1alpha1.PerfSweep) string {
	data, _ := yaml.Marshal(sw.Spec)
	return string(data)
}

// seedSweeps reads every PerfSweep of config/samples and scenarios/.
func seedSweeps(f *testing.F) []*perfexpv1alpha1.PerfSweep {
	var out []*perfexpv1alpha1.PerfSweep
	for _, dir := range []string{"config/samples", "examples", "scenarios"} {
		err := filepath.WalkDir(filepath.Join(testenv.Root(), dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, doc := range bytes.Split(data, []byte("\n---")) {
				var meta metav1.TypeMeta
				if yaml.Unmarshal(doc, &meta) != nil || meta.Kind != "PerfSweep" {
					continue
				}
				sw := &perfexpv1alpha1.PerfSweep{}
				if err := yaml.Unmarshal(doc, sw); err != nil {
					continue
				}
				sw.Namespace = fuzzTeam
				if sw.Spec.Template.TargetNamespace != fuzzOther {
					sw.Spec.Template.TargetNamespace = ""
				}
				out = append(out, sw)
			}
			return nil
		})
		if err != nil {
			f.Fatal(err)
		}
	}
	if len(out) < 5 {
		f.Fatalf("found %d seed sweeps", len(out))
	}
	return out
}

// sweepEdit changes a sweep; the experiment edits reach its template and its arms' variants
// through a PerfExperiment that holds them.
type sweepEdit struct {
	name  string
	apply func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput)
}

// variantSlot picks a variant of the sweep an experiment edit may change: the baseline's, an
// arm's or the capacity search's.
func variantSlot(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) **perfexpv1alpha1.Variant {
	var slots []**perfexpv1alpha1.Variant
	if sw.Spec.Baseline != nil {
		slots = append(slots, &sw.Spec.Baseline.Variant)
	}
	for i := range sw.Spec.Arms {
		slots = append(slots, &sw.Spec.Arms[i].Variant)
	}
	if sw.Spec.Capacity != nil {
		slots = append(slots, &sw.Spec.Capacity.Variant)
	}
	if len(slots) == 0 {
		return nil
	}
	return slots[in.intn(len(slots))]
}

var sweepEdits = []sweepEdit{
	{"template or variant", func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) {
		t := &sw.Spec.Template
		exp := &perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Name: sw.Name, Namespace: sw.Namespace},
			Spec: perfexpv1alpha1.PerfExperimentSpec{Queue: sw.Spec.Queue, Priority: sw.Spec.Priority, TargetNamespace: t.TargetNamespace,
				Setup: t.Setup, Teardown: t.Teardown, Load: t.Load, Analysis: t.Analysis, Timeouts: t.Timeouts}}
		slot := variantSlot(sw, in)
		if slot != nil {
			exp.Spec.Variant = *slot
		}
		specEdits[in.intn(len(specEdits))].apply(exp, in)
		s := exp.Spec
		sw.Spec.Queue, sw.Spec.Priority = s.Queue, s.Priority
		sw.Spec.Template = perfexpv1alpha1.SweepTemplate{TargetNamespace: s.TargetNamespace, Setup: s.Setup, Teardown: s.Teardown, Load: s.Load, Analysis: s.Analysis, Timeouts: s.Timeouts}
		if slot != nil {
			*slot = s.Variant
		}
	}},
	{"name", func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) {
		sw.Name = in.text("sweep", "a", "a-sweep-name-of-sixty-three-characters-long-enough-to-push-limit",
			"a-sweep-name-well-beyond-sixty-three-characters-that-a-dns-subdomain-still-allows-for-objects")
	}},
	{"repeats", func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) { sw.Spec.Repeats = in.int32(5, 20, 21) }},
	{"order", func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) {
		sw.Spec.Order = pick(in, perfexpv1alpha1.SweepOrder(""), perfexpv1alpha1.SweepOrderInterleaved, perfexpv1alpha1.SweepOrderRandomized, "Other")
	}},
	{"minMeaningfulChangePercent", func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) {
		sw.Spec.MinMeaningfulChangePercent = in.int32(5, 50, 101)
	}},
	{"arm.add", func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) {
		arm := perfexpv1alpha1.SweepArm{Name: in.text("pool-50", "baseline", "a", "Bad Name", "", "an-arm-name-long-enough-to-overflow-a-label-value-of-sixty-three-chars")}
		if in.bool() {
			arm.Variant = &perfexpv1alpha1.Variant{Workloads: []perfexpv1alpha1.WorkloadChange{{
				WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"web"}}, Replicas: ptr.To(in.int32(3))}}}
		} else {
			arm.Load = &perfexpv1alpha1.LoadOverride{}
			switch in.intn(4) {
			case 0:
				arm.Load.VUs = ptr.To(in.int32(20))
			case 1:
				arm.Load.Rate = ptr.To(in.int32(20))
			case 2:
				arm.Load.Stages = []perfexpv1alpha1.Stage{{Duration: *in.duration(), Target: in.int32(20)}}
			default:
				arm.Load.Scenarios = []string{in.text(fuzzScenarios...)}
			}
		}
		sw.Spec.Arms = append(sw.Spec.Arms, arm)
	}},
	{"arm.remove", func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) {
		if n := len(sw.Spec.Arms); n > 0 {
			i := in.intn(n)
			sw.Spec.Arms = append(sw.Spec.Arms[:i], sw.Spec.Arms[i+1:]...)
		}
	}},
	{"baseline", func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) {
		if in.bool() {
			sw.Spec.Baseline = nil
		} else {
			sw.Spec.Baseline = &perfexpv1alpha1.SweepBaseline{}
		}
	}},
	{"matrix", func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) {
		d := perfexpv1alpha1.SweepDimension{Name: in.text("pool", "cpu", "Bad Name", "")}
		sel := perfexpv1alpha1.WorkloadSelector{Names: []string{in.text(fuzzNames...)}}
		switch in.intn(5) {
		case 0:
			d.Env = &perfexpv1alpha1.EnvDimension{WorkloadSelector: sel, Variable: in.text(fuzzEnvNames...), Values: []string{in.text("10", "50", ""), in.text("100", "", "10")}}
		case 1:
			d.Resources = &perfexpv1alpha1.ResourcesDimension{WorkloadSelector: sel, Resource: in.text("cpu", "memory", "bad"),
				Target: pick(in, perfexpv1alpha1.ResourceTarget(""), perfexpv1alpha1.ResourceLimit, perfexpv1alpha1.ResourceRequest, "Both"), Values: []string{in.text("500m", "none", "", "1"), in.text("1", "2", "abc")}}
		case 2:
			d.Replicas = &perfexpv1alpha1.ReplicasDimension{WorkloadSelector: sel, Values: []int32{in.int32(1, 2), in.int32(3)}}
		case 3:
			d.Image = &perfexpv1alpha1.ImageDimension{WorkloadSelector: sel, Containers: []string{in.text(fuzzContainers...)}, Values: []string{in.text(fuzzImages...), in.text(fuzzImages...)}}
		default:
			d.Load = &perfexpv1alpha1.LoadDimension{Parameter: pick(in, perfexpv1alpha1.LoadVUs, perfexpv1alpha1.LoadRate, "Other"), Values: []int32{in.int32(10), in.int32(20)}}
		}
		if in.byte() < 40 {
			sw.Spec.Matrix = nil
		}
		sw.Spec.Matrix = append(sw.Spec.Matrix, d)
	}},
	{"sequential", func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) {
		if in.byte() < 60 {
			sw.Spec.Sequential = nil
			return
		}
		sw.Spec.Sequential = &perfexpv1alpha1.SweepSequential{MaxRepeats: in.int32(4, 20, 21)}
		if in.bool() {
			sw.Spec.Sequential.MaxDuration = in.duration()
		}
	}},
	{"capacity", func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) {
		if in.byte() < 60 {
			sw.Spec.Capacity = nil
			return
		}
		sw.Spec.Capacity = &perfexpv1alpha1.SweepCapacity{Parameter: pick(in, perfexpv1alpha1.LoadVUs, perfexpv1alpha1.LoadRate),
			Min: in.int32(5, 50), Max: in.int32(200, 100000), ResolutionPercent: in.int32(10, 50), MaxProbes: in.int32(12, 30), MaxRepeats: in.int32(1, 5, 10)}
	}},
	{"deadline", func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) {
		sw.Spec.Deadline = nil
		if in.bool() {
			sw.Spec.Deadline = in.duration()
		}
	}},
	{"bisect", func(sw *perfexpv1alpha1.PerfSweep, in *fuzzInput) {
		if in.byte() < 60 {
			sw.Spec.Bisect = nil
			return
		}
		b := &perfexpv1alpha1.SweepBisect{MaxRepeats: in.int32(3, 10, 20), MaxSteps: in.int32(8, 40, 48)}
		for range 1 + in.intn(3) {
			b.Services = append(b.Services, perfexpv1alpha1.BisectService{Name: in.text(fuzzNames...), Kind: pick(in, perfexpv1alpha1.WorkloadKind(""), perfexpv1alpha1.WorkloadKindDeployment, perfexpv1alpha1.WorkloadKindStatefulSet),
				Container: in.text(fuzzContainers...), Baseline: in.text(fuzzImages...), Candidate: in.text(fuzzImages...)})
		}
		sw.Spec.Bisect = b
	}},
}
