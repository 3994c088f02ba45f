package service

import (
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestWorkIsDeterministic(t *testing.T) {
	first, second := Work(10, "a"), Work(10, "a")
	if first != second {
		t.Fatal("Work gave two digests for the same input")
	}
	if first == Work(11, "a") {
		t.Fatal("Work ignored the number of rounds")
	}
}

func BenchmarkWork1000(b *testing.B) {
	for b.Loop() {
		Work(1000, "item-1")
	}
}

// The leak knob keeps exactly its bytes per instrumented request, and nothing when off.
func TestLeakKeepsBytesPerRequest(t *testing.T) {
	tests := []struct {
		name       string
		perRequest int
		requests   int
		want       int
	}{
		{"off", 0, 100, 0},
		{"1 KiB per request", 1024, 100, 100 * 1024},
		{"across mappings: 300 KiB per request", 300 << 10, 10, 10 * 300 << 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LEAK_BYTES_PER_REQUEST", strconv.Itoa(tc.perRequest))
			reg := NewRegistry("test")
			h := reg.Instrument("/x", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
			for range tc.requests {
				h(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil))
			}
			if got := reg.leak.Kept(); got != tc.want {
				t.Errorf("kept %d bytes, want %d", got, tc.want)
			}
		})
	}
}

// The release knob scales the configured work; unset, it changes nothing.
func TestWorkRoundsRelease(t *testing.T) {
	tests := []struct {
		name          string
		rounds, extra string
		def, want     int
	}{
		{name: "defaults", def: 20000, want: 20000},
		{name: "WORK_ROUNDS alone", rounds: "1000", def: 20000, want: 1000},
		{name: "a release 200% slower", extra: "200", def: 20000, want: 60000},
		{name: "both", rounds: "1000", extra: "50", def: 20000, want: 1500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("WORK_ROUNDS", tc.rounds)
			t.Setenv("RELEASE_CPU_WORK_PERCENT", tc.extra)
			if got := WorkRounds(tc.def); got != tc.want {
				t.Errorf("WorkRounds(%d) = %d, want %d", tc.def, got, tc.want)
			}
		})
	}
}

// The leak is resident memory outside the Go heap: the process's resident set grows by what
// was leaked, the heap does not, so the working set grows at the injected rate.
func TestLeakIsResidentOutsideTheHeap(t *testing.T) {
	rss := func() int {
		b, err := os.ReadFile("/proc/self/statm")
		if err != nil {
			t.Skip("no /proc/self/statm:", err)
		}
		f := strings.Fields(string(b))
		pages, _ := strconv.Atoi(f[1])
		return pages * os.Getpagesize()
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	l := NewLeak(prometheus.NewRegistry(), 4096)
	rss0, heap0 := rss(), heap()
	const leaked = 16 << 20
	for range leaked / 4096 {
		l.Add()
	}
	grew, heapGrew := rss()-rss0, int64(heap())-int64(heap0)
	if grew < leaked*9/10 {
		t.Errorf("resident set grew %d bytes for %d leaked", grew, leaked)
	}
	if heapGrew > 1<<20 {
		t.Errorf("the Go heap grew %d bytes: the leak is in the heap", heapGrew)
	}
}

// The ballast keeps exactly MEMORY_BALLAST_BYTES, and nothing when unset.
func TestHoldBallast(t *testing.T) {
	t.Setenv("MEMORY_BALLAST_BYTES", strconv.Itoa(3<<20+5))
	if got := HoldBallast(); got != 3<<20+5 {
		t.Errorf("held %d bytes, want %d", got, 3<<20+5)
	}
	t.Setenv("MEMORY_BALLAST_BYTES", "")
	if got := HoldBallast(); got != 0 {
		t.Errorf("held %d bytes with the variable unset", got)
	}
}
