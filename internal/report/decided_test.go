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
