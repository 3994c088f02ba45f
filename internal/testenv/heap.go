package testenv

import (
	"os"
	"runtime"
	"strconv"
	"strings"
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

// ResetPeakRSS sets the process' resident-set high-water mark (VmHWM) back to its current RSS
// (Linux: "5" written to /proc/self/clear_refs), so PeakRSS measures from here. It reports
// whether the kernel allowed it.
func ResetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// PeakRSS is the process' resident-set high-water mark in bytes (VmHWM of /proc/self/status);
// false where the kernel does not say.
func PeakRSS() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, false
			}
			return kib << 10, true
		}
	}
	return 0, false
}
