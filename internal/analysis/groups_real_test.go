package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/result"
)

// groupsScript is a check-out/check-in desk written with k6 groups, a time Trend and a Trend
// of plain numbers. Its thresholds exist only to make k6's summary carry each group's own
// statistics (k6 summarises a submetric only when a threshold names it).
const groupsScript = `
import http from 'k6/http';
import { group } from 'k6';
import { Trend } from 'k6/metrics';

const transaction = new Trend('checkout_transaction', true);
const basket = new Trend('basket_weight');

export const options = {
  scenarios: { desk: { executor: 'constant-vus', vus: 4, duration: '5s' } },
  thresholds: {
    'group_duration{group:::check-out}': ['max>=0'],
    'group_duration{group:::check-in}': ['max>=0'],
    'checkout_transaction': ['max>=0'],
    'basket_weight': ['max>=0'],
  },
};

export default function () {
  // The transaction is the three requests' time: k6's timings are fractional milliseconds,
  // where Date.now() would give whole ones and ties that k6's interpolated percentiles split.
  let spent = 0;
  group('check-out', function () {
    spent += http.get(__ENV.BASE + '/out', { tags: { name: 'check-out' } }).timings.duration;
    spent += http.get(__ENV.BASE + '/out', { tags: { name: 'check-out confirm' } }).timings.duration;
  });
  group('check-in', function () {
    spent += http.get(__ENV.BASE + '/in', { tags: { name: 'check-in' } }).timings.duration;
  });
  transaction.add(spent);
  basket.add(0.5 + Math.random() * 20);
}
`

// groupsSummary is what the test reads from a --summary-export document: iterations, and the
// statistics of each metric or submetric (in ms for time metrics).
type groupsSummary struct {
	iterations int64
	stats      map[string]map[string]float64
}

func parseGroupsSummary(t *testing.T, b []byte) groupsSummary {
	t.Helper()
	var doc struct {
		Metrics map[string]map[string]json.RawMessage `json:"metrics"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	s := groupsSummary{stats: map[string]map[string]float64{}}
	for metric, members := range doc.Metrics {
		s.stats[metric] = map[string]float64{}
		for k, raw := range members {
			var v float64
			if json.Unmarshal(raw, &v) == nil {
				s.stats[metric][k] = v
			}
		}
	}
	s.iterations = int64(s.stats["iterations"]["count"])
	return s
}

// summaryRow pairs a reported row with the k6 summary's metric it must match.
type summaryRow struct {
	what, summaryKey string
	count            *int64
	l                result.Latency
	unit             string
}

// Story: the desk's script times its transactions with k6 groups and a custom Trend. perfexp
// reports each group's and Trend's count exactly as k6's summary (and the server) count it, and each
// percentile within the native histogram's bucket bound of k6's own (one runner), or between
// the runners' own widened by that bound (two runners, merged bucket by bucket).
func TestRealK6GroupsAndTrendsMatchTheSummary(t *testing.T) {
	tests := []struct {
		name    string
		runners int
	}{
		{"one runner", 1},
		{"two runners merged", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prom := promtest.Start(t)
			var served = map[string]*atomic.Int64{"/out": {}, "/in": {}}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(time.Duration(300+rand.IntN(3000)) * time.Microsecond)
				if c := served[r.URL.Path]; c != nil {
					c.Add(1)
				}
			}))
			defer srv.Close()
			id := fmt.Sprintf("groups-real-%d", tc.runners)
			start := time.Now().Truncate(time.Second)
			sums := make([]groupsSummary, tc.runners)
			seq := "0"
			for i := 1; i <= tc.runners; i++ {
				seq += fmt.Sprintf(",%d/%d", i, tc.runners)
			}
			var wg sync.WaitGroup
			for i := range tc.runners {
				wg.Add(1)
				go func() {
					defer wg.Done()
					run := promtest.K6Run{Script: groupsScript, TestID: id, Env: map[string]string{"BASE": srv.URL},
						Tags: map[string]string{"instance_id": fmt.Sprint(i)}}
					if tc.runners > 1 {
						run.Segment, run.Sequence = fmt.Sprintf("%d/%d:%d/%d", i, tc.runners, i+1, tc.runners), seq
					}
					sums[i] = parseGroupsSummary(t, prom.RunK6(t, run))
				}()
			}
			wg.Wait()
			end := time.Now().Truncate(time.Second)

			r, err := Analyze(context.Background(), prom.API(t), Input{Experiment: id, TestID: id, Start: start, End: end, Scenarios: []string{"desk"}})
			if err != nil {
				t.Fatal(err)
			}
			var iterations int64
			for _, s := range sums {
				iterations += s.iterations
			}
			if in := served["/in"].Load(); in != iterations {
				t.Fatalf("k6 counted %d iterations, the server %d check-ins", iterations, in)
			}
			sr := r.Scenarios[0]
			var rows []summaryRow
			for _, g := range []string{"check-out", "check-in"} {
				gr := groupOf(sr, g)
				if gr == nil {
					t.Fatalf("group %s not reported: %+v", g, sr.Groups)
				}
				rows = append(rows, summaryRow{"group " + g, "group_duration{group:::" + g + "}", gr.Count, gr.Latency, "ms"})
			}
			for _, name := range []string{"checkout_transaction", "basket_weight"} {
				tr := trendOf(sr, name)
				if tr == nil {
					t.Fatalf("Trend %s not reported: %+v", name, sr.Trends)
				}
				unit := ""
				if name == "checkout_transaction" {
					unit = "ms"
				}
				if tr.Unit != unit {
					t.Errorf("Trend %s: unit %q, want %q", name, tr.Unit, unit)
				}
				rows = append(rows, summaryRow{"Trend " + name, name, tr.Count, tr.Latency, unit})
			}
			for _, row := range rows {
				// k6's own count (the summary's "count" trend stat); every group and Trend runs
				// once per iteration, which the server counted too.
				var counted int64
				for _, s := range sums {
					counted += int64(s.stats[row.summaryKey]["count"])
				}
				if row.count == nil || *row.count != counted || counted != iterations {
					t.Errorf("%s: count %v, k6's summary %d, %d iterations", row.what, deref(row.count), counted, iterations)
				}
				var weighted float64
				for _, s := range sums {
					weighted += s.stats[row.summaryKey]["avg"] * s.stats[row.summaryKey]["count"]
				}
				if avg := weighted / float64(iterations); row.l.Avg == nil || !within(*row.l.Avg, avg, 0.01) {
					t.Errorf("%s: avg %v, k6 %.4f", row.what, deref(row.l.Avg), avg)
				}
				for _, p := range []struct {
					key string
					got *float64
				}{{"p(50)", row.l.P50}, {"p(75)", row.l.P75}, {"p(90)", row.l.P90}, {"p(95)", row.l.P95}} {
					lo, hi := math.Inf(1), math.Inf(-1)
					for _, s := range sums {
						v, ok := s.stats[row.summaryKey][p.key]
						if !ok {
							t.Fatalf("k6's summary has no %s %s: %v", row.summaryKey, p.key, s.stats[row.summaryKey])
						}
						lo, hi = math.Min(lo, v), math.Max(hi, v)
					}
					if p.got == nil || *p.got < lo*(1-schema3Bound) || *p.got > hi*(1+schema3Bound) {
						t.Errorf("%s: %s = %v %s, k6 %.4f..%.4f: beyond the bucket bound of %.2f%%", row.what, p.key, deref(p.got), row.unit, lo, hi, 100*schema3Bound)
					} else {
						t.Logf("%s %s: perfexp %.4f %s, k6 %.4f..%.4f", row.what, p.key, *p.got, row.unit, lo, hi)
					}
				}
				var mx float64
				for _, s := range sums {
					mx = math.Max(mx, s.stats[row.summaryKey]["max"])
				}
				if row.l.Max == nil || *row.l.Max < mx*(1-1e-9) || *row.l.Max > mx*(1+schema3Bound) {
					t.Errorf("%s: max %v, k6 %.4f: not in [max, max*2^(1/8)]", row.what, deref(row.l.Max), mx)
				}
			}
			t.Logf("%d iterations over %d runners, %d queries", iterations, tc.runners, r.PrometheusQueries)
		})
	}
}
