// Command manager runs the perfexp operator.
package main

import (
	"os"

	"github.com/perfexp/perfexp/internal/manager"
)

func main() {
	os.Exit(manager.Main())
}
