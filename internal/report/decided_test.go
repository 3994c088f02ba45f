package report

import (
	"strings"
	"testing"

	"github.com/perfexp/perfexp/internal/result"
)

// Story: two guards widened a single-run comparison's intervals (a busier node, throttling on
// both sides). The headline says the intervals were widened and where to read why; "How this
// was decided" states each guard's reason once, after the method, never in the method too.
func TestGuardsStatedOnceInHowThisWasDecided(t *testing.T) {
	busier := "the node was busier during the baseline (1.20 more cores outside the experiment)"
	throttled := "circulation was throttled on both sides: widened by up to 6x"
	r := sample()
	c := r.Comparison
	c.NodeLoad, c.BaselineNodeLoad = &result.NodeLoad{Source: result.SourcePods}, &result.NodeLoad{Source: result.SourcePods}
	c.Disturbed = busier + "; " + throttled
	c.Notes = append(c.Notes, busier, throttled)
	md := Markdown(r)
	head := md[:strings.Index(md, "## Objectives")]
	decided := md[strings.Index(md, "## How this was decided"):]
	if !strings.Contains(head, "**Intervals widened**") || strings.Contains(head, busier) {
		t.Errorf("the headline should say the intervals were widened, and leave why to the end:\n%s", head)
	}
	for _, why := range []string{busier, throttled} {
		if n := strings.Count(md, why); n != 1 || !strings.Contains(decided, "**Intervals widened:** "+busier+"; "+throttled+".") {
			t.Errorf("%q is stated %d times, want once, after the node load:\n%s", why, n, decided)
		}
	}
}

// Story: the baseline's node load was read from node_exporter and saw a build beside the run;
// this run's Prometheus had neither node_exporter nor the root cgroup, only the pods. The
// node-load line gives both figures and says, once, which side could not see processes
// outside pods; the node section names each source.
func TestNodeLoadLineSaysWhatItCannotSee(t *testing.T) {
	r := sample()
	c := r.Comparison
	c.NodeLoad = &result.NodeLoad{Source: result.SourcePods, Node: "10.0.0.4:10250", Cores: 2, OtherCores: 0.05, OtherPeakCores: 0.1, OwnCores: 0.9}
	c.BaselineNodeLoad = &result.NodeLoad{Source: result.SourceNodeExporter, Node: "10.0.0.4:10250", Cores: 2, OtherCores: 1.2, OtherPeakCores: 1.4, OwnCores: 0.7}
	r.NodeLoad = c.NodeLoad
	md := Markdown(r)
	want := "Node load outside the experiment: this run 0.05 of 2 cores, 2 % (90th percentile 0.10), outside the experiment; " +
		"baseline 1.20 of 2 cores, 60 % (90th percentile 1.40), outside the experiment (this run: processes outside pods not seen: no node_exporter or root cgroup series)."
	if !strings.Contains(md, want) {
		t.Errorf("want the line\n%s\nin\n%s", want, md[strings.Index(md, "## How this was decided"):])
	}
	if n := strings.Count(md, "processes outside pods not seen"); n != 2 {
		t.Errorf("the clause appears %d times, want on the comparison's line and the node's", n)
	}
	if !strings.Contains(md, "Node 10.0.0.4:10250 (read from the sum of all pods): 0.05 of 2 cores, 2 % (90th percentile 0.10), outside the experiment (processes outside pods not seen") {
		t.Errorf("the node section:\n%s", md)
	}
	c.NodeLoad.Source, r.NodeLoad.Source = result.SourceNodeExporter, result.SourceNodeExporter
	md = Markdown(r)
	if strings.Contains(md, "not seen") || !strings.Contains(md, "(read from the node_exporter CPU counters)") {
		t.Errorf("both sides from node_exporter: nothing unseen to say\n%s", md)
	}
}
