package controllers

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// fuzzInput hands out the fuzz input's bytes as choices; once they run out every choice is
// the first one, so each input is a finite list of edits.
type fuzzInput struct{ b []byte }

func (in *fuzzInput) empty() bool { return len(in.b) == 0 }

func (in *fuzzInput) byte() byte {
	if len(in.b) == 0 {
		return 0
	}
	v := in.b[0]
	in.b = in.b[1:]
	return v
}

func (in *fuzzInput) intn(n int) int { return int(in.byte()) % n }

func (in *fuzzInput) bool() bool { return in.byte()&1 == 1 }

func pick[T any](in *fuzzInput, options ...T) T { return options[in.intn(len(options))] }

// text is a word from the dictionary most of the time, and otherwise up to 80 raw bytes of the
// input (the length first), so names, values and queries meet both the expected and the odd.
func (in *fuzzInput) text(dict ...string) string {
	if n := in.byte(); n < 200 && len(dict) > 0 {
		return dict[int(n)%len(dict)]
	}
	n := min(in.intn(81), len(in.b))
	s := string(in.b[:n])
	in.b = in.b[n:]
	return s
}

func (in *fuzzInput) int32(dict ...int32) int32 {
	if in.byte() < 220 {
		return pick(in, append(dict, 0, 1, 2, 3, 10, 100, 1000, -1, 1<<31-1)...)
	}
	return int32(uint32(in.byte())<<24 | uint32(in.byte())<<16 | uint32(in.byte())<<8 | uint32(in.byte()))
}

func (in *fuzzInput) duration() *metav1.Duration {
	d := pick(in, 0, time.Millisecond, time.Second, 30*time.Second, time.Minute, 10*time.Minute, time.Hour,
		24*time.Hour, 47*time.Hour, 48*time.Hour, 168*time.Hour, 169*time.Hour, 191*time.Hour, 192*time.Hour, 193*time.Hour, 720*time.Hour, 721*time.Hour, -time.Second,
		time.Duration(in.int32())*time.Second)
	return &metav1.Duration{Duration: d}
}

func (in *fuzzInput) quantity() resource.Quantity {
	s := in.text("0", "1", "1m", "100m", "0.5", "2", "64Mi", "1Gi", "1e3", "-1", "1E", "999999999999", "10%", "abc")
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.MustParse("1")
	}
	return q
}

var (
	fuzzNamespaces = []string{"", fuzzTeam, fuzzOther, fuzzPlain, fuzzOperator, "kube-system", "missing", "Team", "a-very-long-namespace-name-that-is-exactly-sixty-three-characters"}
	fuzzNames      = []string{"web", "api", "db", "missing", "Web", "web*", "", "a", "checkin"}
	fuzzContainers = []string{"web", "api", "db", "sidecar", "", "*"}
	fuzzEnvNames   = []string{"HTTP_MAXPOOLSIZE", "KAFKA_BOOTSTRAP_SERVERS", "NEW_VAR", "", "1BAD", "A=B", "K6_PROMETHEUS_RW_SERVER_URL", "PATH", "K6_OUT", "K6_PROMETHEUS_RW_TREND_STATS", "K6_PROMETHEUS_RW_HEADERS_X"}
	fuzzImages     = []string{"", "grafana/k6:1.8.1", "registry.example/web:2.0", "busybox", "evil.example/miner:latest", "UPPER:Case", "a@sha256:00"}
	fuzzScenarios  = []string{"checkinout", "browse", "s", "load", "Bad Name", "", "warmup", "x-" + string(make([]byte, 0))}
	fuzzQueries    = []string{
		`sum(rate(http_reqs_total{namespace="{{.Namespace}}"}[{{.Window}}]))`, `up{testid="{{ .TestID }}"}`, `{{range 9}}x{{end}}`,
		`{{.Nope}}`, `sum(up)`, `x @ {{.End}}`, `{{`, `}}`, `{{.Window}}{{.Window}}`, `rate(x[5m]`, "",
	}
)

// specEdit is one way to change a spec; the fuzz input picks edits and their values.
type specEdit struct {
	name  string
	apply func(exp *perfexpv1alpha1.PerfExperiment, in *fuzzInput)
}

func scenario(exp *perfexpv1alpha1.PerfExperiment, in *fuzzInput) *perfexpv1alpha1.Scenario {
	if len(exp.Spec.Load.Scenarios) == 0 {
		exp.Spec.Load.Scenarios = []perfexpv1alpha1.Scenario{{Name: "s", Script: perfexpv1alpha1.ScriptSource{Inline: "export default function () {}"}}}
	}
	return &exp.Spec.Load.Scenarios[in.intn(len(exp.Spec.Load.Scenarios))]
}

func workloadChange(exp *perfexpv1alpha1.PerfExperiment, in *fuzzInput) *perfexpv1alpha1.WorkloadChange {
	v := variantOf(exp)
	if len(v.Workloads) == 0 || in.byte() < 40 {
		v.Workloads = append(v.Workloads, perfexpv1alpha1.WorkloadChange{WorkloadSelector: perfexpv1alpha1.WorkloadSelector{Names: []string{"web"}}})
	}
	return &v.Workloads[in.intn(len(v.Workloads))]
}

func variantOf(exp *perfexpv1alpha1.PerfExperiment) *perfexpv1alpha1.Variant {
	if exp.Spec.Variant == nil {
		exp.Spec.Variant = &perfexpv1alpha1.Variant{}
	}
	return exp.Spec.Variant
}

func analysisOf(exp *perfexpv1alpha1.PerfExperiment) *perfexpv1alpha1.Analysis {
	if exp.Spec.Analysis == nil {
		exp.Spec.Analysis = &perfexpv1alpha1.Analysis{}
	}
	return exp.Spec.Analysis
}

func timeoutsOf(exp *perfexpv1alpha1.PerfExperiment) *perfexpv1alpha1.Timeouts {
	if exp.Spec.Timeouts == nil {
		exp.Spec.Timeouts = &perfexpv1alpha1.Timeouts{}
	}
	return exp.Spec.Timeouts
}

func selector(in *fuzzInput) perfexpv1alpha1.WorkloadSelector {
	s := perfexpv1alpha1.WorkloadSelector{Kind: pick(in, perfexpv1alpha1.WorkloadKind(""), perfexpv1alpha1.WorkloadKindDeployment, perfexpv1alpha1.WorkloadKindStatefulSet, "DaemonSet")}
	if in.bool() {
		s.Names = []string{in.text(fuzzNames...)}
		if in.bool() {
			s.Names = append(s.Names, in.text(fuzzNames...))
		}
	} else {
		s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{pick(in, "app", "tier", "bad key!"): in.text("web", "backend", "data", "", "none")}}
	}
	return s
}

func envVar(in *fuzzInput) perfexpv1alpha1.EnvVar {
	v := perfexpv1alpha1.EnvVar{Name: in.text(fuzzEnvNames...), Value: in.text("50", "", "http://x", "a\nb")}
	switch in.intn(5) {
	case 1:
		v.ValueFrom = &perfexpv1alpha1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: in.text("db", "")}, Key: in.text("password", "")}}
	case 2:
		v.ValueFrom = &perfexpv1alpha1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: in.text("POOL", "missing")}}
	case 3:
		v.ValueFrom = &perfexpv1alpha1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: in.text("metadata.name", "spec.nodeName", "bad")}}
	}
	return v
}

// specEdits are the edits the fuzz input chooses from, one or more per field of the spec.
var specEdits = []specEdit{
	{"queue", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) { e.Spec.Queue = in.text(fuzzNamespaces...) }},
	{"priority", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) { e.Spec.Priority = in.int32(1001, -1001) }},
	{"targetNamespace", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		e.Spec.TargetNamespace = in.text(fuzzNamespaces...)
	}},
	{"name", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		e.Name = in.text("exp", "a", "a-name-of-sixty-three-characters-long-enough-to-push-every-limit", "x.y", "UPPER",
			"a-name-well-beyond-sixty-three-characters-that-only-a-dns-subdomain-allows-in-kubernetes-objects")
	}},
	{"baseline", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		if in.byte() < 50 {
			e.Spec.Baseline = nil
			return
		}
		e.Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: in.text(e.Name, "before", "", "UPPER")}
	}},
	{"abort", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) { e.Spec.Abort = in.bool() }},
	{"timeouts", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		t := timeoutsOf(e)
		d := in.duration()
		switch in.intn(7) {
		case 0:
			t.Rollout = d
		case 1:
			t.Setup = d
		case 2:
			t.Teardown = d
		case 3:
			t.LoadGrace = d
		case 4:
			t.Analysis = d
		case 5:
			t.Overall = d
		default:
			e.Spec.Timeouts = nil
		}
	}},
	{"load.runner", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		e.Spec.Load.Runner = pick(in, perfexpv1alpha1.RunnerKind(""), perfexpv1alpha1.RunnerJob, perfexpv1alpha1.RunnerK6Operator, "Other")
	}},
	{"load.image", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) { e.Spec.Load.Image = in.text(fuzzImages...) }},
	{"load.pod", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		p := &perfexpv1alpha1.RunnerPod{}
		switch in.intn(4) {
		case 0:
			p.ServiceAccountName = in.text("", "default", "perfexp-runner", "admin", "Bad")
		case 1:
			p.NodeSelector = map[string]string{in.text("pool", "kubernetes.io/hostname", "bad key!"): in.text("load", "")}
		case 2:
			p.Tolerations = []corev1.Toleration{{Key: in.text("dedicated", ""), Operator: pick(in, corev1.TolerationOpExists, corev1.TolerationOpEqual, ""), Value: in.text("load", ""), Effect: pick(in, corev1.TaintEffectNoSchedule, "")}}
		default:
			p.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: in.quantity()}, Requests: corev1.ResourceList{corev1.ResourceMemory: in.quantity()}}
		}
		e.Spec.Load.Pod = pick(in, p, nil)
	}},
	{"load.warmUp", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		if in.byte() < 60 {
			e.Spec.Load.WarmUp = nil
			return
		}
		e.Spec.Load.WarmUp = &perfexpv1alpha1.WarmUp{Scenario: in.text(fuzzScenarios...), Exec: in.text("", "warm", "default"), VUs: in.int32(), Duration: *in.duration()}
	}},
	{"scenario.add", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		s := perfexpv1alpha1.Scenario{Name: in.text(fuzzScenarios...), Script: perfexpv1alpha1.ScriptSource{Inline: "export default function () {}"}, VUs: ptr.To(in.int32(5)), Duration: in.duration()}
		e.Spec.Load.Scenarios = append(e.Spec.Load.Scenarios, s)
	}},
	{"scenario.remove", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		if n := len(e.Spec.Load.Scenarios); n > 0 {
			i := in.intn(n)
			e.Spec.Load.Scenarios = append(e.Spec.Load.Scenarios[:i], e.Spec.Load.Scenarios[i+1:]...)
		}
	}},
	{"scenario.name", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		scenario(e, in).Name = in.text(fuzzScenarios...)
	}},
	{"scenario.script", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		s := scenario(e, in)
		switch in.intn(3) {
		case 0:
			s.Script = perfexpv1alpha1.ScriptSource{Inline: in.text("export default function () {}", "", "import http from 'k6/http'; export default function () { http.get('http://web') }")}
		case 1:
			s.Script = perfexpv1alpha1.ScriptSource{ConfigMap: &perfexpv1alpha1.ConfigMapScript{Name: in.text("scripts", "missing", ""), Key: in.text("script.js", "", "missing.js", "../etc")}}
		default:
			s.Script = perfexpv1alpha1.ScriptSource{}
		}
	}},
	{"scenario.exec", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		scenario(e, in).Exec = in.text("", "default", "checkout", "1bad", "a b")
	}},
	{"scenario.shape", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		s := scenario(e, in)
		s.VUs, s.Duration, s.Stages, s.ArrivalRate, s.FromScript, s.ScriptDuration = nil, nil, nil, nil, false, nil
		switch in.intn(5) {
		case 0:
			s.VUs, s.Duration = ptr.To(in.int32(5)), in.duration()
		case 1:
			for range 1 + in.intn(3) {
				s.Stages = append(s.Stages, perfexpv1alpha1.Stage{Duration: *in.duration(), Target: in.int32()})
			}
		case 2:
			s.ArrivalRate = &perfexpv1alpha1.ArrivalRate{Rate: in.int32(), Duration: *in.duration(), PreAllocatedVUs: in.int32(), TimeUnit: pick(in, nil, in.duration())}
			if in.bool() {
				s.ArrivalRate.MaxVUs = ptr.To(in.int32())
			}
		case 3:
			s.FromScript = true
			if in.bool() {
				s.ScriptDuration = in.duration()
			}
		default:
			s.VUs = ptr.To(in.int32())
		}
	}},
	{"scenario.parallelism", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		scenario(e, in).Parallelism = in.int32(4, 64, 65)
	}},
	{"scenario.startDelay", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) { scenario(e, in).StartDelay = in.duration() }},
	{"scenario.env", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		s := scenario(e, in)
		s.Env = append(s.Env, envVar(in))
	}},
	{"scenario.args", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		s := scenario(e, in)
		s.Args = append(s.Args, in.text("--no-thresholds", "--out", "-o", "--address=0.0.0.0:1", "", "--tag", "testid=victim-1", "--tag=testid=victim-1", "-qo", "--out=json", "team=a"))
	}},
	{"scenario.image", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) { scenario(e, in).Image = in.text(fuzzImages...) }},
	{"scenario.resources", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		scenario(e, in).Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceName(in.text("cpu", "memory", "nvidia.com/gpu", "bad name")): in.quantity()}}
	}},
	{"setup", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		s := &perfexpv1alpha1.Setup{Image: in.text(fuzzImages...), Command: []string{in.text("sh", "")}, Args: []string{in.text("-c", "cat /var/run/secrets/kubernetes.io/serviceaccount/token")},
			ServiceAccountName: in.text("", "", "default", "perfexp-runner", "admin"), BackoffLimit: in.int32(6, 7)}
		if in.bool() {
			s.Env = []perfexpv1alpha1.EnvVar{envVar(in)}
		}
		if in.bool() {
			s.RunAsUser = ptr.To(int64(in.int32(0, 12345)))
		}
		if in.bool() {
			s.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: in.quantity()}}
		}
		if in.byte() < 60 {
			s = nil
		}
		if in.bool() {
			e.Spec.Teardown = s
		} else {
			e.Spec.Setup = s
		}
	}},
	{"variant.remove", func(e *perfexpv1alpha1.PerfExperiment, _ *fuzzInput) { e.Spec.Variant = nil }},
	{"variant.description", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) { variantOf(e).Description = in.text("", "x") }},
	{"workload.selector", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		workloadChange(e, in).WorkloadSelector = selector(in)
	}},
	{"workload.containers", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		w := workloadChange(e, in)
		w.Containers = append(w.Containers, in.text(fuzzContainers...))
	}},
	{"workload.resources", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		w := workloadChange(e, in)
		if w.Resources == nil || in.byte() < 30 {
			w.Resources = &perfexpv1alpha1.ResourcesChange{}
		}
		name := corev1.ResourceName(in.text("cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "hugepages-2Mi", "bad name"))
		switch in.intn(4) {
		case 0:
			if w.Resources.Requests == nil {
				w.Resources.Requests = corev1.ResourceList{}
			}
			w.Resources.Requests[name] = in.quantity()
		case 1:
			if w.Resources.Limits == nil {
				w.Resources.Limits = corev1.ResourceList{}
			}
			w.Resources.Limits[name] = in.quantity()
		case 2:
			w.Resources.RemoveRequests = append(w.Resources.RemoveRequests, name)
		default:
			w.Resources.RemoveLimits = append(w.Resources.RemoveLimits, name)
		}
	}},
	{"workload.env", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		w := workloadChange(e, in)
		if w.Env == nil || in.byte() < 30 {
			w.Env = &perfexpv1alpha1.EnvChange{}
		}
		if in.bool() {
			w.Env.Set = append(w.Env.Set, envVar(in))
		} else {
			w.Env.Remove = append(w.Env.Remove, in.text(fuzzEnvNames...))
		}
	}},
	{"workload.replicas", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		workloadChange(e, in).Replicas = pick(in, nil, ptr.To(in.int32(0, 5, 101)))
	}},
	{"workload.image", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		workloadChange(e, in).Image = in.text(fuzzImages...)
	}},
	{"workload.remove", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		if v := e.Spec.Variant; v != nil && len(v.Workloads) > 0 {
			i := in.intn(len(v.Workloads))
			v.Workloads = append(v.Workloads[:i], v.Workloads[i+1:]...)
		}
	}},
	{"kafka.bootstrap", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		b := &perfexpv1alpha1.KafkaBootstrapSwitch{Workloads: selector(in), EnvVar: in.text("", "KAFKA_BOOTSTRAP_SERVERS", "1BAD"), Address: in.text("kafka-kraft:9092", "", "a b")}
		if in.bool() {
			b.Containers = []string{in.text(fuzzContainers...)}
		}
		if in.bool() {
			b.Address = ""
			b.FromKafka = &perfexpv1alpha1.StrimziKafkaRef{Name: in.text("kraft", "", "missing"), Namespace: in.text(fuzzNamespaces...), Listener: in.text("", "plain", "tls")}
		}
		variantOf(e).Kafka = &perfexpv1alpha1.KafkaVariant{Bootstrap: b}
	}},
	{"kafka.strimziMode", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		variantOf(e).Kafka = &perfexpv1alpha1.KafkaVariant{StrimziMode: &perfexpv1alpha1.StrimziModeSwitch{
			Name: in.text("cluster", "", "missing"), KRaft: pick(in, perfexpv1alpha1.KRaftMode("enabled"), "disabled", "migration", "rollback", "bogus"),
			ExpectedMetadataState: in.text("", "KRaft", "ZooKeeper")}}
	}},
	{"patches", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		p := perfexpv1alpha1.ObjectPatch{
			Target: perfexpv1alpha1.ObjectTarget{
				APIVersion: in.text("v1", "apps/v1", "autoscaling/v2", "rbac.authorization.k8s.io/v1", "kafka.strimzi.io/v1beta2", "a/b/c", ""),
				Kind:       in.text("ConfigMap", "Service", "Deployment", "HorizontalPodAutoscaler", "Secret", "Role", "StatefulSet", ""),
				Name:       in.text("settings", "web", "api", "db", "missing", ""),
			},
			Type: pick(in, perfexpv1alpha1.PatchType(""), perfexpv1alpha1.PatchTypeStrategicMerge, perfexpv1alpha1.PatchTypeMerge, perfexpv1alpha1.PatchTypeJSON, "other"),
			Patch: in.text(`{"data":{"POOL":"50"}}`, `{"spec":{"replicas":3}}`, `{"spec":{"maxReplicas":8}}`, `[{"op":"replace","path":"/data/POOL","value":"7"}]`,
				`{"metadata":{"labels":{"x":"y"}}}`, `{"metadata":{"name":"other"}}`, `{"metadata":{"namespace":"kube-system"}}`, `{"spec":{"ports":null}}`, `null`, `[]`, `{}`, `{"data":{"POOL":null}}`,
				`{"spec":{"template":{"spec":{"serviceAccountName":"admin"}}}}`, `{"kind":"Secret"}`, `[{"op":"remove","path":"/spec"}]`, `not json`, `{"spec":{"selector":{"app":"db"}}}`),
		}
		v := variantOf(e)
		if in.byte() < 40 {
			v.Patches = nil
		}
		v.Patches = append(v.Patches, p)
	}},
	{"analysis.remove", func(e *perfexpv1alpha1.PerfExperiment, _ *fuzzInput) { e.Spec.Analysis = nil }},
	{"analysis.prometheusURL", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		analysisOf(e).PrometheusURL = in.text("", fuzzProm, fuzzProm+"/", "http://169.254.169.254/", "not a url", "ftp://x")
	}},
	{"analysis.observe", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		a := analysisOf(e)
		a.Observe = append(a.Observe, perfexpv1alpha1.ObservedWorkloads{WorkloadSelector: selector(in), Namespace: in.text(fuzzNamespaces...)})
	}},
	{"analysis.queries", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		a := analysisOf(e)
		a.Queries = append(a.Queries, perfexpv1alpha1.CustomQuery{Name: in.text("db_cpu", "", "Bad Name", "x"), Query: in.text(fuzzQueries...), Unit: in.text("", "cores")})
	}},
	{"analysis.slices", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		a := analysisOf(e)
		s := perfexpv1alpha1.TimeSlice{Name: in.text("first", "last", "", "all")}
		if in.bool() {
			s.Last = in.duration()
		} else {
			s.From, s.To = pick(in, nil, in.duration()), pick(in, nil, in.duration())
		}
		a.Slices = append(a.Slices, s)
	}},
	{"analysis.objectives", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		a := analysisOf(e)
		o := perfexpv1alpha1.Objective{
			Name: in.text("", "p95", "x"),
			Metric: pick(in, perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricAvg, perfexpv1alpha1.MetricMax, perfexpv1alpha1.MetricErrorRate, perfexpv1alpha1.MetricRate,
				perfexpv1alpha1.MetricQuery, perfexpv1alpha1.MetricPassRate, perfexpv1alpha1.MetricCount, perfexpv1alpha1.MetricPercent, perfexpv1alpha1.MetricMin, perfexpv1alpha1.MetricLast, "bogus"),
			Check: in.text("", "status is 200"), Counter: in.text("", "orders"), Rate: in.text("", "hits"), Gauge: in.text("", "queue_depth"),
			Scenario: in.text(append([]string{""}, fuzzScenarios...)...),
			Request:  in.text("", "GET /"),
			Query:    in.text("", "db_cpu"),
		}
		switch in.intn(4) {
		case 0:
			q := in.quantity()
			o.Max = &q
		case 1:
			q := in.quantity()
			o.Min = &q
		case 2:
			o.MaxIncreasePercent = ptr.To(in.int32(5, 101))
		default:
			o.MaxDecreasePercent = ptr.To(in.int32(5, 101))
		}
		a.Objectives = append(a.Objectives, o)
	}},
	{"analysis.numbers", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		a := analysisOf(e)
		q := in.quantity()
		switch in.intn(4) {
		case 0:
			a.MaxErrorRatePercent = &q
		case 1:
			a.MinMeaningfulChangePercent = &q
		case 2:
			a.MaxNodeLoadDifference = &q
		default:
			a.BetweenRun = &perfexpv1alpha1.BetweenRunNoise{SDPercent: &q, Runs: in.int32(), Source: in.text("", "calibration")}
		}
	}},
	{"analysis.historyKey", func(e *perfexpv1alpha1.PerfExperiment, in *fuzzInput) {
		analysisOf(e).HistoryKey = in.text("", "checkout", "Bad Key")
	}},
}
