//go:build slow

package main

import "time"

// releaseDelay is added to every check-out and check-in: the slow release (build tag slow,
// image perfexp/demo-inventory:next) waits this long before answering, without using CPU, so the
// slowdown shows whatever the node's load: about +25 ms on circulation's check-out and check-in,
// which each call inventory once.
const releaseDelay = 25 * time.Millisecond
