package analysis

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/perfexp/perfexp/internal/text"
)

// timingQuerier records how long each query took, so a benchmark can say which queries the
// wall time goes to (Prometheus's own time does not show in a Go CPU profile).
type timingQuerier struct {
	Querier
	mu    sync.Mutex
	times map[string]time.Duration
}

func (t *timingQuerier) record(q string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.times == nil {
		t.times = map[string]time.Duration{}
	}
	t.times[q] += d
}

func (t *timingQuerier) Query(ctx context.Context, query string, ts time.Time, opts ...promv1.Option) (model.Value, promv1.Warnings, error) {
	begin := time.Now()
	defer func() { t.record(query, time.Since(begin)) }()
	return t.Querier.Query(ctx, query, ts, opts...)
}

func (t *timingQuerier) QueryRange(ctx context.Context, query string, r promv1.Range, opts ...promv1.Option) (model.Value, promv1.Warnings, error) {
	begin := time.Now()
	defer func() { t.record("range "+query, time.Since(begin)) }()
	return t.Querier.QueryRange(ctx, query, r, opts...)
}

// log writes the slowest queries to the test log.
func (t *timingQuerier) log(tb testing.TB, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	type qt struct {
		q string
		d time.Duration
	}
	var all []qt
	var total time.Duration
	for q, d := range t.times {
		all = append(all, qt{q, d})
		total += d
	}
	sort.Slice(all, func(i, j int) bool { return all[i].d > all[j].d })
	tb.Logf("%d distinct queries, %v summed", len(all), total)
	for i, x := range all {
		if i == n {
			break
		}
		tb.Logf("%8v  %s", x.d.Round(time.Millisecond), text.Truncate(x.q, 220))
	}
}

// cpuSeconds is the user and system CPU time of a process so far (from /proc; Linux only).
func cpuSeconds(tb testing.TB, pid int) float64 {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Skipf("no /proc: %v", err)
	}
	// Fields after the command name (which may hold spaces, so split after its closing paren):
	// utime and stime are the 12th and 13th, in clock ticks (100 per second on Linux).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}
