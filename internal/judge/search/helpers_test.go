package search

func ptr(v float64) *float64 { return &v }
