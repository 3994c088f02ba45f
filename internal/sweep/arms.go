package sweep

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// expandArms lists the baseline, the explicit arms and the matrix's cells, in that order.
func expandArms(s *perfexpv1alpha1.PerfSweep) ([]Arm, error) {
	base := Arm{Name: perfexpv1alpha1.BaselineArm, Parameter: "-", Value: "as deployed"}
	if s.Spec.Baseline != nil && s.Spec.Baseline.Variant != nil {
		base.Variant = s.Spec.Baseline.Variant.DeepCopy()
		base.Parameter, base.Value = describe(base.Variant, nil)
	}
	arms := []Arm{base}
	for _, a := range s.Spec.Arms {
		arm := Arm{Name: a.Name, Variant: a.Variant.DeepCopy(), Load: a.Load.DeepCopy()}
		arm.Parameter, arm.Value = describe(arm.Variant, arm.Load)
		arms = append(arms, arm)
	}
	cells, err := expandMatrix(s.Spec.Matrix)
	if err != nil {
		return nil, err
	}
	arms = append(arms, cells...)
	if len(arms) > MaxArms {
		return nil, fmt.Errorf("the sweep has %d arms with the baseline (the matrix multiplies its dimensions); at most %d are allowed", len(arms), MaxArms)
	}
	return arms, nil
}

// addLoadBaselines gives every arm the arm it is compared with. An arm that changes the
// environment and also the load is compared with the baseline at the same load: latencies at
// different loads answer different questions, and the comparison refuses runs whose load
// shapes differ. Such a baseline is an arm that already runs that load as the baseline does,
// or else a new baseline arm, baseline-<load>, placed right after the baseline. Every other arm
// is compared with the baseline; baselines are compared with nothing.
func addLoadBaselines(arms []Arm) []Arm {
	main := arms[0]
	var added []Arm
	for i := range arms[1:] {
		a := &arms[i+1]
		a.Baseline = main.Name
		if a.Load == nil {
			continue
		}
		if sameVariant(a.Variant, main.Variant) {
			a.LoadOnly = true
			continue
		}
		want := Arm{Variant: main.Variant.DeepCopy(), Load: a.Load.DeepCopy()}
		found := ""
		for _, b := range append(append([]Arm{}, added...), arms[1:]...) {
			if b.Name != a.Name && sameArm(want, b) {
				found = b.Name
				break
			}
		}
		if found == "" {
			param, value := describe(nil, a.Load)
			want.Name = fit(main.Name + "-" + slug(param+"-"+value))
			want.Parameter, want.Value = describe(want.Variant, want.Load)
			added = append(added, want)
			found = want.Name
		}
		a.Baseline = found
	}
	if len(added) == 0 {
		return arms
	}
	out := make([]Arm, 0, len(arms)+len(added))
	out = append(out, main)
	out = append(out, added...)
	return append(out, arms[1:]...)
}

func sameVariant(a, b *perfexpv1alpha1.Variant) bool {
	return equality.Semantic.DeepEqual(withoutDescription(a), withoutDescription(b))
}

// level is one value of one matrix dimension.
type level struct {
	name, parameter, value string
	workload               *perfexpv1alpha1.WorkloadChange
	load                   *perfexpv1alpha1.LoadOverride
}

// expandMatrix makes one arm per combination of the dimensions' values, the first dimension
// varying slowest.
func expandMatrix(dims []perfexpv1alpha1.SweepDimension) ([]Arm, error) {
	if len(dims) == 0 {
		return nil, nil
	}
	loads := 0
	combos := [][]level{{}}
	for _, d := range dims {
		levels, err := levelsOf(d)
		if err != nil {
			return nil, err
		}
		if d.Load != nil {
			loads++
		}
		var next [][]level
		for _, c := range combos {
			for _, l := range levels {
				next = append(next, append(append([]level{}, c...), l))
			}
		}
		combos = next
		if len(combos) > MaxArms {
			return nil, fmt.Errorf("the matrix makes more than %d arms; use fewer dimensions or values", MaxArms)
		}
	}
	if loads > 1 {
		return nil, fmt.Errorf("the matrix has %d load dimensions; a run has one load, so at most one is allowed", loads)
	}
	arms := make([]Arm, 0, len(combos))
	for _, c := range combos {
		var names, params, values []string
		arm := Arm{}
		for _, l := range c {
			names = append(names, l.name)
			params = append(params, l.parameter)
			values = append(values, l.value)
			if l.workload != nil {
				if arm.Variant == nil {
					arm.Variant = &perfexpv1alpha1.Variant{}
				}
				arm.Variant.Workloads = append(arm.Variant.Workloads, *l.workload)
			}
			if l.load != nil {
				arm.Load = l.load
			}
		}
		arm.Name = fit(strings.Join(names, "-"))
		arm.Parameter, arm.Value = clip(strings.Join(params, " x ")), clip(strings.Join(values, " x "))
		arms = append(arms, arm)
	}
	return arms, nil
}

func levelsOf(d perfexpv1alpha1.SweepDimension) ([]level, error) {
	var out []level
	add := func(value, parameter string, wc *perfexpv1alpha1.WorkloadChange, lo *perfexpv1alpha1.LoadOverride) {
		out = append(out, level{name: d.Name + "-" + slug(value), parameter: parameter, value: value, workload: wc, load: lo})
	}
	switch {
	case d.Env != nil:
		for _, v := range d.Env.Values {
			add(v, d.Env.Variable, &perfexpv1alpha1.WorkloadChange{WorkloadSelector: d.Env.WorkloadSelector, Containers: d.Env.Containers,
				Env: &perfexpv1alpha1.EnvChange{Set: []perfexpv1alpha1.EnvVar{{Name: d.Env.Variable, Value: v}}}}, nil)
		}
	case d.Resources != nil:
		r := d.Resources
		target := r.Target
		if target == "" {
			target = perfexpv1alpha1.ResourceLimit
		}
		parameter := r.Resource + " " + strings.ToLower(string(target))
		for _, v := range r.Values {
			rc := &perfexpv1alpha1.ResourcesChange{}
			name := corev1.ResourceName(r.Resource)
			if v == "none" {
				if target == perfexpv1alpha1.ResourceLimit {
					rc.RemoveLimits = []corev1.ResourceName{name}
				} else {
					rc.RemoveRequests = []corev1.ResourceName{name}
				}
			} else {
				q, err := resource.ParseQuantity(v)
				if err != nil {
					return nil, fmt.Errorf("matrix dimension %s: %q is not a quantity", d.Name, v)
				}
				if target == perfexpv1alpha1.ResourceLimit {
					rc.Limits = corev1.ResourceList{name: q}
				} else {
					rc.Requests = corev1.ResourceList{name: q}
				}
			}
			add(v, parameter, &perfexpv1alpha1.WorkloadChange{WorkloadSelector: r.WorkloadSelector, Containers: r.Containers, Resources: rc}, nil)
		}
	case d.Replicas != nil:
		for _, v := range d.Replicas.Values {
			n := v
			add(strconv.Itoa(int(v)), "replicas", &perfexpv1alpha1.WorkloadChange{WorkloadSelector: d.Replicas.WorkloadSelector, Replicas: &n}, nil)
		}
	case d.Image != nil:
		for _, v := range d.Image.Values {
			add(v, "image", &perfexpv1alpha1.WorkloadChange{WorkloadSelector: d.Image.WorkloadSelector, Containers: d.Image.Containers, Image: v}, nil)
		}
	case d.Load != nil:
		for _, v := range d.Load.Values {
			n := v
			lo := &perfexpv1alpha1.LoadOverride{}
			parameter := "vus"
			if d.Load.Parameter == perfexpv1alpha1.LoadRate {
				lo.Rate, parameter = &n, "rate"
			} else {
				lo.VUs = &n
			}
			add(strconv.Itoa(int(v)), parameter, nil, lo)
		}
	default:
		return nil, fmt.Errorf("matrix dimension %s sets none of env, resources, replicas, image or load", d.Name)
	}
	return out, nil
}

var notNameChar = regexp.MustCompile(`[^a-z0-9]+`)

// slug makes a value usable in a name: lower case letters, digits and single dashes.
func slug(v string) string {
	s := strings.Trim(notNameChar.ReplaceAllString(strings.ToLower(v), "-"), "-")
	if s == "" {
		return "x"
	}
	return s
}

// checkArms refuses arms that change nothing compared with the baseline, and pairs of arms that
// are the same run under two names: both waste hours of a shared environment. Descriptions do
// not count as changes.
func checkArms(s *perfexpv1alpha1.PerfSweep, arms []Arm) error {
	seen := map[string]bool{}
	for i, a := range arms {
		if seen[a.Name] {
			return fmt.Errorf("two arms are named %s (an explicit arm and a matrix cell?); arm names must be unique", a.Name)
		}
		seen[a.Name] = true
		if i == 0 {
			continue
		}
		if sameArm(arms[0], a) {
			return fmt.Errorf("arm %s changes nothing compared with the baseline: its variant and load are the baseline's", a.Name)
		}
		for _, b := range arms[1:i] {
			if sameArm(a, b) {
				return fmt.Errorf("arms %s and %s are equal: every arm must differ from the others in its variant or load", b.Name, a.Name)
			}
		}
		if a.Load != nil {
			if err := checkLoad(s, a); err != nil {
				return err
			}
		}
	}
	return nil
}

func sameArm(a, b Arm) bool {
	return sameVariant(a.Variant, b.Variant) && equality.Semantic.DeepEqual(a.Load, b.Load)
}

func withoutDescription(v *perfexpv1alpha1.Variant) *perfexpv1alpha1.Variant {
	if v == nil {
		return nil
	}
	c := v.DeepCopy()
	c.Description = ""
	if len(c.Workloads) == 0 && c.Kafka == nil && len(c.Patches) == 0 {
		return nil
	}
	return c
}

// checkLoad refuses a load override that applies to no scenario that runs, which would leave
// the arm running the baseline's load while claiming to vary it.
func checkLoad(s *perfexpv1alpha1.PerfSweep, a Arm) error {
	load := s.Spec.Template.Load.DeepCopy()
	applied, err := applyLoad(load, a.Load)
	if err != nil {
		return fmt.Errorf("arm %s: %w", a.Name, err)
	}
	if !applied {
		what := "vus applies to scenarios that run with vus and duration"
		switch {
		case a.Load.Rate != nil:
			what = "rate applies to scenarios that run with an arrivalRate"
		case len(a.Load.Stages) > 0:
			what = "stages apply to scenarios that run with vus or stages"
		}
		return fmt.Errorf("arm %s changes no scenario's load: %s, and none of its scenarios does", a.Name, what)
	}
	return nil
}

// describe says in a few words what a variant and a load override change.
func describe(v *perfexpv1alpha1.Variant, lo *perfexpv1alpha1.LoadOverride) (parameter, value string) {
	var params, values []string
	add := func(p, v string) { params, values = append(params, p), append(values, v) }
	if v != nil {
		for _, w := range v.Workloads {
			if w.Env != nil {
				for _, e := range w.Env.Set {
					val := e.Value
					if e.ValueFrom != nil {
						val = "(from a reference)"
					}
					add(e.Name, val)
				}
				for _, n := range w.Env.Remove {
					add(n, "unset")
				}
			}
			if r := w.Resources; r != nil {
				for _, n := range sortedNames(r.Limits) {
					q := r.Limits[n]
					add(string(n)+" limit", q.String())
				}
				for _, n := range r.RemoveLimits {
					add(string(n)+" limit", "none")
				}
				for _, n := range sortedNames(r.Requests) {
					q := r.Requests[n]
					add(string(n)+" request", q.String())
				}
				for _, n := range r.RemoveRequests {
					add(string(n)+" request", "none")
				}
			}
			if w.Replicas != nil {
				add("replicas", strconv.Itoa(int(*w.Replicas)))
			}
			if w.Image != "" {
				add("image", w.Image)
			}
		}
		if k := v.Kafka; k != nil {
			if k.Bootstrap != nil {
				addr := k.Bootstrap.Address
				if k.Bootstrap.FromKafka != nil {
					addr = k.Bootstrap.FromKafka.Name
				}
				add("kafka", addr)
			}
			if k.StrimziMode != nil {
				add("kraft", string(k.StrimziMode.KRaft))
			}
		}
		for _, p := range v.Patches {
			add("patch", p.Target.Kind+"/"+p.Target.Name)
		}
	}
	if lo != nil {
		if len(lo.Scenarios) > 0 {
			add("scenarios", strings.Join(lo.Scenarios, "+"))
		}
		switch {
		case lo.VUs != nil:
			add("vus", strconv.Itoa(int(*lo.VUs)))
		case lo.Rate != nil:
			add("rate", strconv.Itoa(int(*lo.Rate)))
		case len(lo.Stages) > 0:
			st := make([]string, 0, len(lo.Stages))
			for _, s := range lo.Stages {
				st = append(st, fmt.Sprintf("%s@%d", s.Duration.Duration, s.Target))
			}
			add("stages", strings.Join(st, " "))
		}
	}
	if len(params) == 0 {
		if v != nil && v.Description != "" {
			return "variant", clip(v.Description)
		}
		return "-", "-"
	}
	return clip(strings.Join(params, " x ")), clip(strings.Join(values, " x "))
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	return slices.Sorted(maps.Keys(l))
}

// clip keeps a description short enough for a status field and a table cell.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// loadParameter recognises a sweep over load: every arm but the baseline sets only vus (or
// only rate). It also fills each arm's LoadValue, the baseline's from the template.
func loadParameter(s *perfexpv1alpha1.PerfSweep, arms []Arm) perfexpv1alpha1.LoadParameter {
	var param perfexpv1alpha1.LoadParameter
	for _, a := range arms[1:] {
		if a.Baseline == "" {
			continue
		}
		if a.Variant != nil || a.Load == nil || len(a.Load.Scenarios) > 0 || len(a.Load.Stages) > 0 {
			return ""
		}
		p := perfexpv1alpha1.LoadVUs
		if a.Load.Rate != nil {
			p = perfexpv1alpha1.LoadRate
		}
		if param != "" && p != param {
			return ""
		}
		param = p
	}
	if param == "" || arms[0].Variant != nil {
		return ""
	}
	for i := range arms[1:] {
		a := &arms[i+1]
		if a.Baseline == "" {
			continue
		}
		v := a.Load.VUs
		if param == perfexpv1alpha1.LoadRate {
			v = a.Load.Rate
		}
		f := float64(*v)
		a.LoadValue = &f
	}
	for _, sc := range s.Spec.Template.Load.Scenarios {
		switch {
		case param == perfexpv1alpha1.LoadVUs && sc.VUs != nil:
			f := float64(*sc.VUs)
			arms[0].LoadValue = &f
		case param == perfexpv1alpha1.LoadRate && sc.ArrivalRate != nil:
			f := float64(sc.ArrivalRate.Rate)
			arms[0].LoadValue = &f
		}
		if arms[0].LoadValue != nil {
			arms[0].Parameter, arms[0].Value = strings.ToLower(string(param)), strconv.FormatFloat(*arms[0].LoadValue, 'f', -1, 64)
			break
		}
	}
	return param
}
