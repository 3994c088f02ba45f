package service

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
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
