package judge

import (
	"os"
	"testing"
)

// TestMain runs the package's tests of the within-run machinery without the assumed between-run
// noise (see assumedBetweenRun); the tests of that noise ask for it explicitly.
func TestMain(m *testing.M) {
	assumedBetweenRun = func() BetweenRun { return BetweenRun{} }
	os.Exit(m.Run())
}
