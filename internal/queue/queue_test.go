package queue_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/perfexp/perfexp/internal/queue"
)

func TestOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := func(name string, priority int32, age time.Duration, baseline string) queue.Member {
		return queue.Member{UID: types.UID(name), Namespace: "perf", Name: name, Priority: priority, Created: t0.Add(-age), Baseline: baseline}
	}
	tests := []struct {
		name    string
		members []queue.Member
		want    string
	}{
		{"higher priority first", []queue.Member{m("a", 0, 3*time.Hour, ""), m("b", 5, time.Hour, "")}, "b a"},
		{"then older first", []queue.Member{m("a", 0, time.Hour, ""), m("b", 0, 2*time.Hour, "")}, "b a"},
		{"then by name", []queue.Member{m("b", 0, time.Hour, ""), m("a", 0, time.Hour, "")}, "a b"},
		{"negative priority last", []queue.Member{m("low", -10, 5*time.Hour, ""), m("mid", 0, time.Hour, "")}, "mid low"},
		{"a waiting baseline runs before the experiments compared with it",
			[]queue.Member{m("variant", 10, time.Hour, "base"), m("other", 5, time.Hour, ""), m("base", 0, time.Hour, "")}, "other base variant"},
		{"a baseline that already ran does not hold anything back",
			[]queue.Member{m("variant", 10, time.Hour, "done-long-ago"), m("other", 0, time.Hour, "")}, "variant other"},
		{"chains of baselines keep their order",
			[]queue.Member{m("c", 9, time.Hour, "b"), m("b", 8, time.Hour, "a"), m("a", 0, time.Hour, "")}, "a b c"},
		{"a cycle of baselines still yields every member once",
			[]queue.Member{m("x", 1, time.Hour, "y"), m("y", 0, time.Hour, "x")}, "x y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			members := slices.Clone(tt.members)
			queue.Order(members)
			var got []string
			for _, mm := range members {
				got = append(got, mm.Name)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("order %v, want %s", got, tt.want)
			}
			if p := queue.Position(members, types.UID(got[len(got)-1])); p != int32(len(got)) {
				t.Errorf("position of the last = %d, want %d", p, len(got))
			}
		})
	}
}

func TestLeaseName(t *testing.T) {
	long := strings.Repeat("q", 63)
	// What follows the prefix in a long queue's Lease name, used as a short queue's name.
	hashedLong := queue.LeaseName(long)[len("perfexp-queue-"):]
	tests := []struct {
		name string
		a, b string // two queues that must get different Leases ("" b: only check a's form)
		want string // a's Lease name, when known
	}{
		{name: "a short queue keeps its name", a: "library", want: "perfexp-queue-library"},
		{name: "the longest short queue keeps its name", a: strings.Repeat("s", 49), want: "perfexp-queue-" + strings.Repeat("s", 49)},
		{name: "two long queues differ", a: long, b: long + "x"},
		{name: "long queues differing only at the end differ", a: long + "a", b: long + "b"},
		// A short queue named like the hash of a long one must not share its Lease.
		{name: "a short queue that looks like a hashed one", a: long, b: hashedLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := queue.LeaseName(tt.a)
			if len(got) > 63 {
				t.Errorf("LeaseName(%q) = %q: longer than 63 characters", tt.a, got)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("LeaseName(%q) = %q, want %q", tt.a, got, tt.want)
			}
			if tt.b != "" && got == queue.LeaseName(tt.b) {
				t.Errorf("queues %q and %q share the Lease %q", tt.a, tt.b, got)
			}
		})
	}
}

func TestOrderAnnotations(t *testing.T) {
	sweepCreated := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	stamped := sweepCreated.Add(3 * time.Second) // runs created a little after their sweep
	run := func(name string, seq int) queue.Member {
		return queue.Member{UID: types.UID(name), Namespace: "perf", Name: name, Created: stamped}.
			WithOrderAnnotations(map[string]string{
				queue.AnnotationEnqueuedAt: sweepCreated.Format(time.RFC3339),
				queue.AnnotationSequence:   strconv.Itoa(seq),
			})
	}
	plain := func(name string, created time.Time) queue.Member {
		return queue.Member{UID: types.UID(name), Namespace: "perf", Name: name, Created: created}
	}
	tests := []struct {
		name    string
		members []queue.Member
		want    string
	}{
		{"the sequence wins over names (interleaved B, V1, V2, B, V1, V2)",
			[]queue.Member{run("s-v2-1", 2), run("s-baseline-2", 3), run("s-v1-2", 4), run("s-baseline-1", 0), run("s-v1-1", 1), run("s-v2-2", 5)},
			"s-baseline-1 s-v1-1 s-v2-1 s-baseline-2 s-v1-2 s-v2-2"},
		{"an experiment applied between the sweep and its stamping runs after the whole sweep",
			[]queue.Member{plain("between", sweepCreated.Add(time.Second)), run("s-b", 0), run("s-v", 1)}, "s-b s-v between"},
		{"an experiment applied before the sweep runs first",
			[]queue.Member{run("s-b", 0), plain("earlier", sweepCreated.Add(-time.Second))}, "earlier s-b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			members := slices.Clone(tt.members)
			queue.Order(members)
			var got []string
			for _, mm := range members {
				got = append(got, mm.Name)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("order %v, want %s", got, tt.want)
			}
		})
	}

	t.Run("malformed annotations are ignored", func(t *testing.T) {
		m := plain("x", stamped).WithOrderAnnotations(map[string]string{queue.AnnotationEnqueuedAt: "yesterday", queue.AnnotationSequence: "-3"})
		if !m.Created.Equal(stamped) || m.Sequence != 0 {
			t.Errorf("got created %v sequence %d, want the creation time and 0", m.Created, m.Sequence)
		}
	})
}

func TestShownPosition(t *testing.T) {
	tests := []struct {
		name         string
		shown, exact int32
		want         int32
	}{
		{"a new member gets its exact place", 0, 500, 500},
		{"the head is always exact", 2, 1, 1},
		{"the last exact place", 11, 10, 10},
		{"a member entering the exact places from behind", 12, 10, 10},
		{"a shown place is kept within a tenth", 500, 460, 500},
		{"at exactly a tenth it is kept", 550, 500, 550},
		{"past a tenth it is replaced", 551, 500, 500},
		{"a member pushed back by arrivals keeps its place within a tenth", 500, 540, 500},
		{"pushed back further it is replaced", 500, 560, 560},
		{"a shown exact place becomes approximate only by rewriting", 10, 11, 11},
		{"just behind the exact places drift is 1", 12, 11, 12},
		{"just behind the exact places drift of 2 is replaced", 13, 11, 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := queue.ShownPosition(tt.shown, tt.exact); got != tt.want {
				t.Errorf("ShownPosition(%d, %d) = %d, want %d", tt.shown, tt.exact, got, tt.want)
			}
		})
	}
}

// A member that waits at the back of a long queue while every member ahead runs is rewritten
// a number of times that grows with the log of its place, not with the place itself, and what
// it shows never drifts more than a tenth from its exact place.
func TestShownPositionOverAQueuesLife(t *testing.T) {
	tests := []struct {
		start     int32
		maxWrites int
	}{
		{start: 10, maxWrites: 10},
		{start: 100, maxWrites: 35},
		{start: 1000, maxWrites: 60},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(int(tt.start)), func(t *testing.T) {
			shown, writes := int32(0), 0
			for exact := tt.start; exact >= 1; exact-- {
				next := queue.ShownPosition(shown, exact)
				if next != shown {
					writes++
					shown = next
				}
				drift := shown - exact
				if exact <= queue.ExactPositions && drift != 0 || 10*drift > exact {
					t.Fatalf("at exact place %d it shows %d", exact, shown)
				}
			}
			if writes > tt.maxWrites {
				t.Errorf("%d writes for a member that started at %d, want at most %d", writes, tt.start, tt.maxWrites)
			}
			t.Logf("start %d: %d writes", tt.start, writes)
		})
	}
}
