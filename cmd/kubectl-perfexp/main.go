// Command kubectl-perfexp is the kubectl plugin for perfexp: `kubectl perfexp report NAME`
// prints an experiment's report, `kubectl perfexp queue` shows who waits for which
// environment, `kubectl perfexp abort NAME` stops an experiment, `kubectl perfexp compare`
// prints the comparison table of two experiments or of a sweep, and `kubectl perfexp plan`
// tells what manifests will run and cost before they are applied.
package main

import (
	"os"
)

func main() {
	if err := newRootCommand(kubeconfigClient).Execute(); err != nil {
		os.Exit(exitCode(err))
	}
}
