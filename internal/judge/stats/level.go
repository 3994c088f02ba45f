package stats

// Confidence is the coverage of every interval perfexp reports; a verdict is decided on it.
const Confidence = 0.95

// alpha is 1 - Confidence: the error rate a claim of change is held to.
const alpha = 1 - Confidence
