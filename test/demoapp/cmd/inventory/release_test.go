package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The released image answers without a deliberate delay; `go test -tags slow` checks the slow
// release's (release_slow.go).
func TestReleaseDelay(t *testing.T) {
	h := delayed(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	start := time.Now()
	h(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/inventory/items/b1/check-out", nil))
	took := time.Since(start)
	if took < releaseDelay {
		t.Errorf("the handler answered after %s, before the release's delay of %s", took, releaseDelay)
	}
	if releaseDelay == 0 && took > 20*time.Millisecond {
		t.Errorf("the released image took %s to answer, want no delay", took)
	}
	t.Logf("release delay %s, answered after %s", releaseDelay, took)
}
