// Command kafka is a single-broker Kafka stand-in for the demo: franz-go's kfake, a real
// implementation of the Kafka wire protocol kept in memory. The demo runs it twice, as
// "kafka-zookeeper" and "kafka-kraft", so an experiment can repoint circulation from one
// cluster to the other by its bootstrap address. Both run the same code: the demo shows how a
// Kafka-mode variant is expressed and measured, not how real ZooKeeper and KRaft differ.
//
// Environment:
//
//	KAFKA_PORT              listen port (9092)
//	KAFKA_ADVERTISED_HOST   host name clients are told to connect to (the Service name)
//	KAFKA_CLUSTER_ID        cluster id reported in metadata (perfexp-demo)
//	KAFKA_TOPICS            comma-separated topics created at start (circulation.loans)
//	KAFKA_RETENTION_MS      how long records are kept in memory (120000)
//	MEMORY_BALLAST_BYTES    bytes held resident for life, a steady footprint like a real service's (0)
package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

// advertisedListener listens on all addresses but reports the advertised host as its address:
// kfake tells clients to reconnect to its listener's address, and a pod's wildcard or loopback
// address means nothing to a client in another pod.
type advertisedListener struct {
	net.Listener
	addr advertisedAddr
}

type advertisedAddr string

func (a advertisedAddr) Network() string { return "tcp" }
func (a advertisedAddr) String() string  { return string(a) }

func (l advertisedListener) Addr() net.Addr { return l.addr }

func main() {
	port := service.EnvInt("KAFKA_PORT", 9092)
	host := service.EnvString("KAFKA_ADVERTISED_HOST", "")
	if host == "" {
		host, _ = os.Hostname()
	}
	topics := strings.Split(service.EnvString("KAFKA_TOPICS", "circulation.loans"), ",")
	retention := service.EnvInt("KAFKA_RETENTION_MS", 120000)

	listen := func(network, _ string) (net.Listener, error) {
		ln, err := net.Listen(network, fmt.Sprintf(":%d", port))
		if err != nil {
			return nil, err
		}
		return advertisedListener{Listener: ln, addr: advertisedAddr(net.JoinHostPort(host, fmt.Sprint(port)))}, nil
	}
	service.HoldBallast()
	cluster, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.ListenFn(listen),
		kfake.ClusterID(service.EnvString("KAFKA_CLUSTER_ID", "perfexp-demo")),
		kfake.AllowAutoTopicCreation(),
		kfake.SeedTopics(3, topics...),
		// Records live in memory: without retention a long soak would grow the broker without
		// bound and turn into a memory-leak finding about the test rig itself.
		// Retention drops whole segments only: with the default 100 MiB segment, records past
		// retention stayed in the one active segment for hours, and the broker grew by all it
		// was sent (seen in a 45-minute soak: 50 -> 67 MiB). Small segments roll, and go.
		kfake.BrokerConfigs(map[string]string{
			"log.retention.ms":    fmt.Sprint(retention),
			"log.retention.bytes": fmt.Sprint(64 << 20),
			"log.segment.bytes":   fmt.Sprint(1 << 20),
		}),
	)
	if err != nil {
		slog.Error("Starting the broker failed", "err", err)
		os.Exit(1)
	}
	// Go forces a garbage collection every two minutes, but only once a first one has run, and
	// the first runs when the heap reaches 4 MiB. An idle broker allocates only for its
	// readiness probes (about 1.5 KiB each, every 2 s), so without this its heap would take
	// over an hour to get there, rising all the while: a 45-minute soak read that as a leak
	// of 2.6 MiB/h in the idle kafka-kraft. One collection now starts the two-minute clock.
	runtime.GC()
	slog.Info("Started Kafka broker", "listen", cluster.ListenAddrs(), "advertised", host, "topics", topics)

	ticker := time.NewTicker(10 * time.Second)
	defer ticker.Stop()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	for {
		select {
		case <-ticker.C:
			cluster.ApplyRetention()
		case <-sigs:
			cluster.Close()
			return
		}
	}
}
