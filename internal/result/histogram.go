package result

import (
	"math"
	"sort"
)

// bucketKey identifies a native-histogram bucket by its bounds. Prometheus prints bounds with the
// shortest decimal that parses back to the same float64, so equal bounds of different series
// compare equal.
type bucketKey struct {
	lower, upper float64
	boundaries   int32
}

// Histogram is a cumulative native histogram, or the difference of two. Prometheus 2.42 cannot
// subtract native histograms in PromQL (it silently returns a float 0; 3.x can), so sums and
// differences are done here, bucket by bucket, the same on every version.
type Histogram struct {
	Count   float64
	Sum     float64
	buckets map[bucketKey]float64
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram { return &Histogram{buckets: map[bucketKey]float64{}} }

// AddBucket adds count observations to the bucket with the given bounds.
func (h *Histogram) AddBucket(lower, upper float64, boundaries int32, count float64) {
	h.buckets[bucketKey{lower: lower, upper: upper, boundaries: boundaries}] += count
}

// EachBucket calls f with every bucket's bounds and count, in no particular order.
func (h *Histogram) EachBucket(f func(lower, upper, count float64)) {
	for k, v := range h.buckets {
		f(k.lower, k.upper, v)
	}
}

// Add adds o to h.
func (h *Histogram) Add(o *Histogram) {
	if o == nil {
		return
	}
	h.Count += o.Count
	h.Sum += o.Sum
	for k, v := range o.buckets {
		h.buckets[k] += v
	}
}

// Sub subtracts o from h.
func (h *Histogram) Sub(o *Histogram) {
	if o == nil {
		return
	}
	h.Count -= o.Count
	h.Sum -= o.Sum
	for k, v := range o.buckets {
		h.buckets[k] -= v
	}
}

// Clone returns a deep copy.
func (h *Histogram) Clone() *Histogram {
	out := NewHistogram()
	out.Add(h)
	return out
}

// Consistent reports whether no bucket is negative, which holds unless a counter reset went
// unnoticed.
func (h *Histogram) Consistent() bool {
	if h.Count < 0 {
		return false
	}
	for _, v := range h.buckets {
		if v < 0 {
			return false
		}
	}
	return true
}

type bucket struct {
	bucketKey
	count float64
}

func (h *Histogram) sorted() []bucket {
	bs := make([]bucket, 0, len(h.buckets))
	for k, v := range h.buckets {
		if v > 0 {
			bs = append(bs, bucket{k, v})
		}
	}
	sort.Slice(bs, func(i, j int) bool {
		if bs[i].upper != bs[j].upper {
			return bs[i].upper < bs[j].upper
		}
		return bs[i].lower < bs[j].lower
	})
	return bs
}

// Quantile estimates the q-quantile (0 < q <= 1). The bucket that holds the observation of rank
// ceil(q*count) is found exactly; inside it the estimate is interpolated exponentially (the
// buckets are exponential, so a log-uniform spread inside a bucket is the natural assumption,
// as Prometheus 3 does). The estimate is therefore never further from the true order
// statistic than the bucket's width: a relative error of at most upper/lower - 1, which is
// 2^(1/8) - 1 = 9.05% for the schema-3 histograms k6 writes. It returns false on an empty
// histogram.
func (h *Histogram) Quantile(q float64) (float64, bool) {
	bs := h.sorted()
	var total float64
	for _, b := range bs {
		total += b.count
	}
	if total <= 0 || math.IsNaN(q) {
		return 0, false
	}
	rank := q * total
	var cum float64
	for i, b := range bs {
		if cum+b.count >= rank || i == len(bs)-1 {
			f := (rank - cum) / b.count
			f = math.Max(0, math.Min(1, f))
			if b.lower > 0 && b.upper > b.lower {
				return b.lower * math.Pow(b.upper/b.lower, f), true
			}
			return b.lower + f*(b.upper-b.lower), true
		}
		cum += b.count
	}
	return 0, false
}

// Mean is sum/count, exact up to float rounding.
func (h *Histogram) Mean() (float64, bool) {
	if h.Count <= 0 {
		return 0, false
	}
	return h.Sum / h.Count, true
}

// MaxBound is the upper bound of the highest non-empty bucket: the true maximum lies in
// (MaxBound/2^(1/8), MaxBound] for schema 3.
func (h *Histogram) MaxBound() (float64, bool) {
	bs := h.sorted()
	if len(bs) == 0 {
		return 0, false
	}
	return bs[len(bs)-1].upper, true
}

// BucketGrowth is the largest ratio upper/lower over the histogram's non-empty positive
// buckets: 1 + the relative error bound of its quantiles.
func (h *Histogram) BucketGrowth() float64 {
	g := 1.0
	for _, b := range h.sorted() {
		if b.lower > 0 && b.upper/b.lower > g {
			g = b.upper / b.lower
		}
	}
	return g
}
