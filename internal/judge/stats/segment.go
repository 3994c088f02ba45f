package stats

// DefaultMinSegment is the fewest runs a segment of a history holds: the change-point search
// splits no shorter one off (judge/history), and the between-run noise of a history's newest
// segment is estimated from no fewer (judge's HistoryNoise). It lives here, below both, so the
// two stay one number without the verdict's package importing the change-point detectors.
const DefaultMinSegment = 3
