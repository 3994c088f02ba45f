package history

import (
	"sort"
	"strconv"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	judgehistory "github.com/perfexp/perfexp/internal/judge/history"
)

// Series is one metric across a history's Valid records.
type Series struct {
	// Key names the series: scenario/metric, scenario/request/metric, service:<kind/ns/name>/cpu
	// or /memory, query:<name>. Metric is the part after the last slash (or "query").
	Key, Metric string
	// Unit of the values: ms, %, req/s, cores, bytes, or "" for custom queries.
	Unit string
	// Worse says which way is bad: +1 when higher is worse (latency, errors, CPU), -1 when
	// lower is (rate), 0 when unknown (custom queries).
	Worse int
	// Values, and for each the index of its record in status.records.
	Values  []float64
	Records []int
}

type metricDef struct {
	name, unit string
	worse      int
	get        func(perfexpv1alpha1.HistoryStats) string
}

// requestMetrics are the per-scenario and per-request series. Count is left out: it follows
// the load's duration, not the system's speed.
var requestMetrics = []metricDef{
	{"avg", "ms", 1, func(s perfexpv1alpha1.HistoryStats) string { return s.Avg }},
	{"p50", "ms", 1, func(s perfexpv1alpha1.HistoryStats) string { return s.P50 }},
	{"p95", "ms", 1, func(s perfexpv1alpha1.HistoryStats) string { return s.P95 }},
	{"p99", "ms", 1, func(s perfexpv1alpha1.HistoryStats) string { return s.P99 }},
	{"errorPercent", "%", 1, func(s perfexpv1alpha1.HistoryStats) string { return s.ErrorPercent }},
	{"rate", "req/s", -1, func(s perfexpv1alpha1.HistoryStats) string { return s.Rate }},
}

// SeriesOf lists every series of the records, in the order they first appear. Invalid runs
// are left out: their numbers describe a broken run, not the system.
func SeriesOf(records []perfexpv1alpha1.HistoryRecord) []Series {
	var order []string
	byKey := map[string]*Series{}
	add := func(key, metric, unit string, worse int, i int, text string) {
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return
		}
		s := byKey[key]
		if s == nil {
			s = &Series{Key: key, Metric: metric, Unit: unit, Worse: worse}
			byKey[key] = s
			order = append(order, key)
		}
		s.Values = append(s.Values, v)
		s.Records = append(s.Records, i)
	}
	for i, r := range records {
		if r.Validity == perfexpv1alpha1.Invalid {
			continue
		}
		for _, sc := range r.Scenarios {
			for _, m := range requestMetrics {
				add(sc.Name+"/"+m.name, m.name, m.unit, m.worse, i, m.get(sc.HistoryStats))
			}
			for _, rq := range sc.Requests {
				for _, m := range requestMetrics {
					add(sc.Name+"/"+rq.Name+"/"+m.name, m.name, m.unit, m.worse, i, m.get(rq.HistoryStats))
				}
			}
		}
		for _, s := range r.Services {
			add("service:"+s.Name+"/cpu", "cpu", "cores", 1, i, s.CPU)
			add("service:"+s.Name+"/memory", "memory", "bytes", 1, i, s.Memory)
		}
		for _, q := range r.Queries {
			add("query:"+q.Name, "query", "", 0, i, q.Value)
		}
	}
	out := make([]Series, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out
}

// Change is a change point of one series.
type Change struct {
	Series string
	Metric string
	Unit   string
	// Record is the index in status.records of the first run of the new level.
	Record     int
	Experiment string
	judgehistory.ChangePoint
	// Verdict is Regressed or Improved when the series says which way is bad, else empty.
	Verdict perfexpv1alpha1.Change
	// Confirmed: a person confirmed this change (it is a fixed segment start).
	Confirmed bool
}

// SettingsOf reads the detection settings of a history's spec; unset or unparsable values
// take the defaults.
func SettingsOf(spec perfexpv1alpha1.PerfHistorySpec) judgehistory.ChangePointSettings {
	set := judgehistory.DefaultChangePointSettings()
	if q := spec.MinMagnitudePercent; q != nil {
		if v := q.AsApproximateFloat64(); v > 0 {
			set.MinMagnitude = v / 100
		} else if v == 0 {
			set.MinMagnitude = -1
		}
	}
	if q := spec.MaxPValue; q != nil {
		if v := q.AsApproximateFloat64(); v > 0 && v < 1 {
			set.MaxPValue = v
		}
	}
	return set
}

// ackFor is the decision on record r for series key, the most specific one winning: an ack
// naming the metric beats one for every metric of the run. named says it named the metric.
func ackFor(acks []perfexpv1alpha1.HistoryAck, r perfexpv1alpha1.HistoryRecord, key string) (d perfexpv1alpha1.AckDecision, named bool) {
	for _, a := range acks {
		if a.Experiment != r.Experiment || (a.UID != "" && a.UID != r.UID) {
			continue
		}
		switch a.Metric {
		case key:
			return a.Decision, true
		case "":
			d = a.Decision
		}
	}
	return d, false
}

// Changes finds the change points of every series of h with its spec's settings and acks:
// a confirmed run starts a new segment of the series (and is listed, Confirmed, where the
// ack names the series or the series changes there), a dismissed change is not listed. The
// series are searched together, with a correction across them (judgehistory.DetectHistoryChangePoints:
// Benjamini-Hochberg over the series at maxPValue), so a history of many metrics does not find
// changes in some of them by chance. Changes are ordered by record, then by series order.
func Changes(h *perfexpv1alpha1.PerfHistory) []Change {
	set := SettingsOf(h.Spec)
	recs := h.Status.Records
	all := SeriesOf(recs)
	values := make([][]float64, len(all))
	fixed := make([][]int, len(all))
	for i, s := range all {
		values[i] = s.Values
		for j, ri := range s.Records {
			if d, _ := ackFor(h.Spec.Acks, recs[ri], s.Key); d == perfexpv1alpha1.AckConfirmed {
				fixed[i] = append(fixed[i], j)
			}
		}
	}
	found := judgehistory.DetectHistoryChangePoints(values, fixed, set)
	var out []Change
	for i, s := range all {
		for _, p := range found[i] {
			r := recs[s.Records[p.Index]]
			d, named := ackFor(h.Spec.Acks, r, s.Key)
			switch {
			case !p.Fixed && d == perfexpv1alpha1.AckDismissed:
				continue
			// A run confirmed for every series starts a segment in each, but is listed only
			// in the series that do change there.
			case p.Fixed && !named && !p.Significant(set):
				continue
			}
			c := Change{Series: s.Key, Metric: s.Metric, Unit: s.Unit, Record: s.Records[p.Index], Experiment: r.Experiment,
				ChangePoint: p, Confirmed: p.Fixed}
			switch {
			case s.Worse == 0 || p.After == p.Before:
			case (p.After > p.Before) == (s.Worse > 0):
				c.Verdict = perfexpv1alpha1.ChangeRegressed
			default:
				c.Verdict = perfexpv1alpha1.ChangeImproved
			}
			out = append(out, c)
		}
	}
	sortChanges(out)
	return out
}

func sortChanges(cs []Change) {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Record < cs[j].Record })
}
