package report

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// studyServices are the ten observed workloads of the wide sweep.
var studyServices = []string{"okapi", "circulation", "inventory", "users", "authtoken", "permissions", "patron", "search", "orders", "postgres"}

// wideSweep is a study of 12 arms beside the baseline and 10 services, compared over 3 runs per
// arm: arm i raises circulation's CPU by 3i %, "aa-control" changes nothing (every interval is
// narrow around 0), and the rest move nothing decided.
func wideSweep() *SweepResult { return wideSweepOf(12, studyServices) }

// wideSweepOf is wideSweep with arms arms beside the baseline (the last the A/A control) and the
// given services.
func wideSweepOf(arms int, services []string) *SweepResult {
	fp := func(v float64) *float64 { return &v }
	r := &SweepResult{Sweep: "edge-patron", Namespace: "perf", Repeats: 3, MinMeaningfulChangePercent: 5}
	arm := func(name string, cpuShift, p95Shift float64) SweepArmResult {
		a := SweepArmResult{Name: name, Parameter: "keycloak_key_cache_ttl_ms", Value: name, Succeeded: 3,
			Scenarios: []SweepScenarioStats{{Name: "patron", Runs: 3, Avg: fp(40 * (1 + p95Shift/100)), P95: fp(120 * (1 + p95Shift/100)), Rate: fp(50), ErrorPercent: fp(0.4)}}}
		for _, sc := range []struct{ kind, name string }{{TransactionScenario, ""}, {TransactionRequest, "GET /patron/account"}, {TransactionRequest, "POST /patron/hold"}, {TransactionGroup, "place hold"}} {
			a.Transactions = append(a.Transactions, SweepTransactionStats{Scenario: "patron", Kind: sc.kind, Name: sc.name, Unit: "ms", Runs: 3,
				Avg: fp(40 * (1 + p95Shift/100)), P50: fp(30), P75: fp(60), P95: fp(120 * (1 + p95Shift/100)), P99: fp(300), ErrorPercent: fp(0.4), Rate: fp(50)})
		}
		for j, s := range services {
			cpu := 0.2 + 0.1*float64(j)
			if s == "circulation" {
				cpu *= 1 + cpuShift/100
			}
			a.Workloads = append(a.Workloads, SweepWorkloadStats{Kind: "Deployment", Namespace: "folio", Name: s, Runs: 3, Pods: 2,
				CPUAvg: fp(cpu), CPUPercentOfRequest: fp(100 * cpu / 1.0), CPUPercentOfLimit: fp(50 * cpu), CPUThrottledPercent: fp(0), MemoryAvg: fp(float64(700+10*j) * (1 << 20))})
		}
		a.Queries = []SweepQueryStats{{Name: "db_cpu", Unit: "%", Runs: 3, Value: fp(12)}, {Name: "broker_cpu", Unit: "%", Runs: 3,
			Series: []SweepQuerySeries{{Labels: map[string]string{"broker": "1"}, Value: fp(30)}, {Labels: map[string]string{"broker": "2"}, Value: fp(24)}}}}
		return a
	}
	base := arm("baseline", 0, 0)
	base.Parameter, base.Value = "-", "as deployed"
	r.Arms = append(r.Arms, base)
	row := func(metric, scenario, request, workload string, kind perfexpv1alpha1.ObjectiveMetric, est, half float64, change perfexpv1alpha1.Change) result.MetricComparison {
		mc := result.MetricComparison{Metric: metric, Scenario: scenario, Request: request, Workload: workload, Kind: kind,
			Estimate: fp(est), Low: fp(est - half), High: fp(est + half), DeltaPercent: fp(est), Scale: result.ScalePercent, Change: change,
			AdjustedP: fp(0.5), Method: result.MethodRuns, Samples: 3, BaselineSamples: 3, SampleUnit: "runs"}
		if change == perfexpv1alpha1.ChangeInconclusive {
			mc.Why = "the 95% interval straddles ±5%: too noisy (3 and 3 runs); more or longer runs narrow it"
		}
		if kind == perfexpv1alpha1.MetricErrorRate {
			mc.Scale = result.ScalePoints
		}
		return mc
	}
	verdict := func(est, half float64) perfexpv1alpha1.Change {
		switch {
		case est-half > 5:
			return perfexpv1alpha1.ChangeRegressed
		case est+half < -5:
			return perfexpv1alpha1.ChangeImproved
		case est-half > -5 && est+half < 5:
			return perfexpv1alpha1.ChangeNoMeaningfulChange
		}
		return perfexpv1alpha1.ChangeInconclusive
	}
	for i := 1; i <= arms; i++ {
		name, cpu, p95, half := fmt.Sprintf("ttl-%d", 100*i), 3*float64(i), float64(i%4)-1.5, 4.0
		if i == arms {
			name, cpu, p95, half = "aa-control", 0.2, 0.1, 1.5
		}
		a := arm(name, cpu, p95)
		a.Baseline = BaselineArmName
		c := &result.Comparison{Baseline: "edge-patron-baseline-1", Method: result.MethodRuns, Runs: 3, BaselineRuns: 3, MinChangePercent: 5}
		for _, m := range []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricP95, perfexpv1alpha1.MetricAvg, perfexpv1alpha1.MetricP50, perfexpv1alpha1.MetricP99, perfexpv1alpha1.MetricRate} {
			mc := row("patron "+strings.ToLower(string(m)), "patron", "", "", m, p95, half, verdict(p95, half))
			mc.Primary = m == perfexpv1alpha1.MetricP95
			c.Metrics = append(c.Metrics, mc)
		}
		c.Metrics = append(c.Metrics, row("patron errorrate", "patron", "", "", perfexpv1alpha1.MetricErrorRate, 0.01, 0.05, perfexpv1alpha1.ChangeNoMeaningfulChange))
		for _, rq := range []string{"GET /patron/account", "POST /patron/hold"} {
			c.Metrics = append(c.Metrics, row("patron/"+rq+" p95", "patron", rq, "", perfexpv1alpha1.MetricP95, p95, half, verdict(p95, half)))
		}
		c.Metrics = append(c.Metrics, row("patron group place hold p95", "patron", "", "", perfexpv1alpha1.MetricP95, p95, half, verdict(p95, half)))
		for _, s := range services {
			shift, h := 0.1, half/2
			if s == "circulation" {
				shift = cpu
			}
			c.Metrics = append(c.Metrics, row("folio/"+s+" cpu avg", "", "", "Deployment/folio/"+s, result.MetricCPU, shift, h, verdict(shift, h)),
				row("folio/"+s+" memory avg", "", "", "Deployment/folio/"+s, result.MetricMemory, 0.1, 1, perfexpv1alpha1.ChangeNoMeaningfulChange))
		}
		c.Change = verdict(p95, half)
		a.Comparison = c
		r.Arms = append(r.Arms, a)
	}
	return r
}

// BaselineArmName is the sweep's baseline arm, as the arms of wideSweep name it.
const BaselineArmName = perfexpv1alpha1.BaselineArm

// Story: a study of 12 arms and 10 services (the edge-patron parameter sweep's size) reads on a
// 1280 px screen without scrolling sideways: every per-arm table has a row per arm and at most 9
// columns, the services are ordered by how much they moved, and the A/A control arm reads as no
// change everywhere. PERFEXP_SWEEP_HTML=path writes the page (docs/images' screenshot is of it).
func TestSweepTablesTwelveArmsTenServices(t *testing.T) {
	r := wideSweep()
	page, err := SweepHTML(r)
	if err != nil {
		t.Fatal(err)
	}
	if path := os.Getenv("PERFEXP_SWEEP_HTML"); path != "" {
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tables := regexp.MustCompile(`(?s)<table>.*?</table>`).FindAllString(page, -1)
	if len(tables) < 10+4+2 {
		t.Fatalf("%d tables, want one per service, transaction and query", len(tables))
	}
	for _, tb := range tables {
		head := tb[:strings.Index(tb, "</tr>")]
		if n := strings.Count(head, "<th>") + strings.Count(head, "<th "); n > 9 {
			t.Errorf("a table of %d columns (at most 9 fit beside each other at 1280 px): %s", n, head)
		}
	}
	for _, id := range []string{"arm-transactions", "arm-services", "arm-queries"} {
		if !strings.Contains(page, `<section id="`+id+`">`) {
			t.Errorf("the page has no section %s", id)
		}
	}

	md := SweepMarkdown(r)
	services := md[strings.Index(md, "## Services: CPU and memory"):strings.Index(md, "## Queries")]
	if got := strings.Count(services, "\n### "); got != 10 {
		t.Errorf("%d service tables, want 10", got)
	}
	if first := services[strings.Index(services, "\n### ")+5:]; !strings.HasPrefix(first, "deployment folio/circulation\n") {
		t.Errorf("the first service table is %q, want circulation's (the only one that moved)", first[:40])
	}
	// Each service table has the baseline and the 12 arms.
	circulation := services[strings.Index(services, "### deployment folio/circulation"):]
	circulation = circulation[:strings.Index(circulation, "\n\n###")]
	if rows := strings.Count(circulation, "\n| ") - 1; rows != 13 {
		t.Errorf("circulation's table has %d rows, want the baseline and 12 arms:\n%s", rows, circulation)
	}
	if !strings.Contains(circulation, "| ttl-1100 | 2 | 0.399 | +33.0 % [+31.0, +35.0] Regressed |") {
		t.Errorf("circulation's table lacks ttl-1100's 33 %% rise:\n%s", circulation)
	}
	// The control: every one of its rows reads no meaningful change, none claims a change.
	judged := md[strings.Index(md, "## Transactions"):strings.Index(md, "## Queries")]
	for _, line := range strings.Split(judged, "\n") {
		if !strings.HasPrefix(line, "| aa-control |") {
			continue
		}
		if strings.Contains(line, "✗") || strings.Contains(line, "✓") || strings.Contains(line, "Regressed") || strings.Contains(line, "Improved") ||
			strings.Contains(line, "Inconclusive") || strings.Contains(line, " ?") {
			t.Errorf("the A/A control claims or doubts a change: %s", line)
		}
		if !strings.Contains(line, "NoMeaningfulChange") && !strings.Contains(line, " = ") && !strings.HasSuffix(line, " = |") {
			t.Errorf("the A/A control's row does not read as no change: %s", line)
		}
	}
	// The error % the arms always carried is printed, with its change in points.
	if !strings.Contains(md, "| Errors % |") || !strings.Contains(md, "0.4 +0.01 pt =") {
		t.Error("the Transactions tables do not print the arms' error %")
	}
	// A query of several series gets a column per series, the broker's CPU per broker.
	if !strings.Contains(md, "### query broker_cpu (%)\n\n| Arm | 1 | 2 |") {
		t.Error("broker_cpu has no column per broker")
	}
}

// Story: a study that reads only CPU (spec.report: sections [Services], maxWorkloads 3) gets the
// three services that moved the most and a line counting the rest; a study that wants p95 and
// p99 alone gets those columns.
func TestSweepReportChoosesTables(t *testing.T) {
	r := wideSweep()
	three := int32(3)
	r.Report = &perfexpv1alpha1.SweepReport{Sections: []perfexpv1alpha1.SweepReportSection{perfexpv1alpha1.SweepSectionServices}, MaxWorkloads: &three}
	md := SweepMarkdown(r)
	if strings.Contains(md, "## Transactions") || strings.Contains(md, "## Queries") {
		t.Error("sections: [Services] still shows the Transactions or Queries tables")
	}
	if n := strings.Count(md, "\n### deployment "); n != 3 {
		t.Errorf("%d service tables, want 3", n)
	}
	if !strings.Contains(md, "7 more workloads moved less (spec.report.maxWorkloads: 3)") {
		t.Error("the services left out are not counted")
	}

	r.Report = &perfexpv1alpha1.SweepReport{Statistics: []perfexpv1alpha1.ObjectiveMetric{perfexpv1alpha1.MetricP99, perfexpv1alpha1.MetricP95}}
	md = SweepMarkdown(r)
	if !strings.Contains(md, "### patron\n\n| Arm | p99 (ms) | p95 (ms) | Δ p95 [95 %] |\n") {
		i := strings.Index(md, "### patron\n")
		t.Errorf("statistics [P99, P95] gave\n%s", md[i:i+200])
	}
}

// Story: kubectl perfexp compare SWEEP prints the per-arm tables a line per compared cell; the
// decided ones say so.
func TestSweepQuantityRows(t *testing.T) {
	rows := SweepQuantityRows(wideSweep())
	var decided []string
	for _, row := range rows {
		if row.Decided {
			decided = append(decided, row.Arm+" "+row.Quantity+" "+row.Statistic+" "+row.Verdict)
		}
		if row.Arm == "aa-control" && row.Decided {
			t.Errorf("the control arm has a decided row: %+v", row)
		}
	}
	if len(decided) == 0 || !strings.Contains(strings.Join(decided, "\n"), "ttl-1200 ") && !strings.Contains(strings.Join(decided, "\n"), "ttl-1100 deployment folio/circulation CPU (cores) Regressed") {
		t.Errorf("decided rows %v: want circulation's CPU rise in ttl-1100", decided)
	}
}

// Story: a sweep whose table of arms and comparisons fit a ConfigMap (12 arms beside 50 observed
// workloads: 730 kB) still publishes its report with the per-arm tables (1.3 MB in full): the
// Services tables keep the workloads that moved the most, and the report says what was left out.
func TestSweepReportFitsAConfigMap(t *testing.T) {
	services := make([]string, 50)
	for i := range services {
		services[i] = fmt.Sprintf("module-%03d", i)
	}
	services[7] = "circulation"
	r := wideSweepOf(12, services)
	data, err := SweepConfigMapData(r)
	if err != nil {
		t.Fatal(err)
	}
	if n := dataSize(data); n > MaxConfigMapBytes {
		t.Fatalf("%d bytes, more than a ConfigMap holds", n)
	}
	md := data[KeySweepMarkdown]
	if !strings.Contains(md, "the report was too large for a ConfigMap: the Services tables keep the") || !strings.Contains(md, "### deployment folio/circulation") {
		t.Errorf("the trimmed report does not say so, or lost the workload that moved:\n%s", md[:min(len(md), 3000)])
	}
	if !strings.Contains(md, "## Transactions") || !strings.Contains(md, "## Queries") {
		t.Error("trimming the services dropped the other tables")
	}
	data, err = SweepConfigMapData(wideSweep())
	if err != nil || strings.Contains(data[KeySweepMarkdown], "too large") {
		t.Errorf("a 12 x 10 sweep was trimmed (%v)", err)
	}
}
