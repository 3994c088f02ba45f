// Command coredns is CoreDNS with only the plugins the local cluster's DNS needs. Building the
// full upstream plugin set pulls in every cloud SDK CoreDNS supports; this keeps the cold build
// short while running the real CoreDNS server and its real kubernetes plugin.
package main

import (
	"github.com/coredns/coredns/coremain"

	// The plugins register themselves with CoreDNS when imported; the order in which they run
	// comes from CoreDNS's own directive list, not from this import list.
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() {
	coremain.Run()
}
