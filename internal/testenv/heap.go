package testenv

import (
	"runtime"
	"time"
)

// PeakHeap samples the live heap every 5 ms until stop is closed and returns the largest size
// seen: the memory a test's work held at its worst, for the caps that bound it.
func PeakHeap(stop <-chan struct{}) uint64 {
	var m runtime.MemStats
	peak := uint64(0)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		runtime.ReadMemStats(&m)
		peak = max(peak, m.HeapAlloc)
		select {
		case <-stop:
			return peak
		case <-tick.C:
		}
	}
}
