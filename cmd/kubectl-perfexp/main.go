// Command kubectl-perfexp is the kubectl plugin for perfexp: `kubectl perfexp report NAME`
// prints an experiment's report, `kubectl perfexp queue` shows who waits for which
// environment, and `kubectl perfexp abort NAME` stops an experiment.
package main

import (
	"os"
)

func main() {
	if err := newRootCommand(kubeconfigClient).Execute(); err != nil {
		os.Exit(1)
	}
}
