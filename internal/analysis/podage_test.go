package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/result"
)

func TestPodAgeIsStatedFromTheLoadStart(t *testing.T) {
	load := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		p       PodAge
		want    []string
		rolled  float64 // -1: nothing rolled
		settled float64
	}{
		{"freshPods rolled 47 s before, settle 30 s", PodAge{FreshPods: 1, RolledOutAt: load.Add(-47 * time.Second), Settle: 30 * time.Second, Settled: 31 * time.Second},
			[]string{"spec.freshPods", "finished 47 s before the load began", "left alone for 31 s", "spec.settle 30 s"}, 47, 31},
		{"a variant's own rollout", PodAge{Variant: true, RolledOutAt: load.Add(-12 * time.Second)},
			[]string{"the variant changes ran on pods created by its rollout, which finished 12 s", "the others ran on the pods as found"}, 12, 0},
		{"nothing rolled", PodAge{}, []string{"ran on the pods as found"}, -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			note := podAgeNote(c.p, load)
			for _, w := range c.want {
				if !strings.Contains(note, w) {
					t.Errorf("note %q lacks %q", note, w)
				}
			}
			r := podAgeResult(c.p, load)
			switch {
			case c.rolled < 0 && r.RolledSecondsBeforeLoad != nil:
				t.Errorf("rolled %v; want none", *r.RolledSecondsBeforeLoad)
			case c.rolled >= 0 && (r.RolledSecondsBeforeLoad == nil || *r.RolledSecondsBeforeLoad != c.rolled):
				t.Errorf("rolled %v; want %v", r.RolledSecondsBeforeLoad, c.rolled)
			}
			if r.SettledSeconds != c.settled || r.FreshPods != (c.p.FreshPods > 0) {
				t.Errorf("result %+v", r)
			}
		})
	}
}

func TestPodAgeMismatchIsNamed(t *testing.T) {
	s := 40.0
	fresh, found := &result.PodAge{RolledSecondsBeforeLoad: &s}, &result.PodAge{}
	if n := podAgeMismatch(fresh, found); !strings.Contains(n, "its baseline on the pods as found") {
		t.Errorf("fresh against as found: %q", n)
	}
	if n := podAgeMismatch(found, fresh); !strings.Contains(n, "the baseline ran on freshly rolled pods") {
		t.Errorf("as found against fresh: %q", n)
	}
	if n := podAgeMismatch(fresh, fresh); n != "" {
		t.Errorf("both fresh: %q", n)
	}
	if n := podAgeMismatch(fresh, nil); n != "" {
		t.Errorf("a baseline without the record: %q", n)
	}
}
