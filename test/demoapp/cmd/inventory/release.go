//go:build !slow

package main

import "time"

// releaseDelay is added to every check-out and check-in: none in the image as released. The
// build tag slow (release_slow.go) makes a deliberately slower release of inventory, the one
// `make demo-bisect` must name among the demo's services.
const releaseDelay time.Duration = 0
