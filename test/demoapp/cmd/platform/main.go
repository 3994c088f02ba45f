// Command platform is the library platform's services in one binary: SERVICE selects which one
// a pod runs. Each keeps its state in PostgreSQL, one schema per tenant, and takes its settings
// from the environment, so an experiment changes a service by changing its Deployment.
//
//	circulation  check-out and check-in: reads the user and the item, writes a loan, marks the
//	             item, publishes a loan event to Kafka
//	inventory    items: read by barcode, status updates, test data generation
//	users        users: read by barcode, test data generation
//	permissions  a user's permissions (read only)
//	lists        lists of items and their refresh: a refresh marks the list isRefreshing, rebuilds
//	             its contents in one transaction and clears the mark; a refresh that fails (lock
//	             wait timeout under concurrent refreshes) leaves the mark set, as the real one did
//	query        the query manager: reads list contents and counts items by status
//	import       data import: consumes records from Kafka and writes them to PostgreSQL; can
//	             also produce a batch of records to import
//	edge         an edge API in front of the gateway with its own pool size and timeout, and a
//	             key cache for patron requests (keycache.go)
//	gateway      routes /<service>/... to the services, the single entry point of the workflows
//	setup        not a service: a one-shot task of a setup or teardown Job (see runSetup)
//
// Environment (all services):
//
//	SERVICE                 which service to run (required)
//	PORT                    listen port (8080)
//	DB_WRITER_URL           PostgreSQL writer (postgres://...); the reader defaults to it
//	DB_READER_URL           PostgreSQL streaming replica
//	READ_FROM_REPLICA       true: reads go to DB_READER_URL, writes to DB_WRITER_URL (false)
//	DB_POOL_MAX             connections per pool (4)
//	TENANTS                 comma-separated tenants, one schema each (diku,east,west)
//	KAFKA_BOOTSTRAP         comma-separated brokers; empty disables events and import
//	WORK_ROUNDS             CPU work per request in SHA-256 rounds (2000)
//	RELEASE                 r1 or r2: two releases that differ in known ways (r1; patron.go)
//	LEAK_BYTES_PER_REQUEST  bytes kept for good per request: a deliberate slow leak for soaks (0)
//	MEMORY_BALLAST_BYTES    bytes held resident for life (0)
//
// Service-specific settings are described where they are read.
package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

func main() {
	name := os.Getenv("SERVICE")
	if name == "setup" {
		if err := runSetup(context.Background()); err != nil {
			slog.Error("Setup failed", "err", err)
			os.Exit(1)
		}
		return
	}
	if err := run(name); err != nil {
		slog.Error("Service failed", "service", name, "err", err)
		os.Exit(1)
	}
}

func run(name string) error {
	service.HoldBallast()
	reg := service.NewRegistry(name)
	mux := http.NewServeMux()
	ctx := context.Background()
	switch name {
	case "gateway":
		newGateway(mux, reg)
	case "edge":
		newEdge(mux, reg)
	default:
		db, err := openDB(ctx, name)
		if err != nil {
			return err
		}
		defer db.close()
		if err := db.migrate(ctx); err != nil {
			return err
		}
		switch name {
		case "inventory":
			newInventory(mux, reg, db)
		case "users":
			newUsers(mux, reg, db)
		case "permissions":
			newPermissions(mux, reg, db)
		case "circulation":
			c, err := newCirculation(mux, reg, db)
			if err != nil {
				return err
			}
			defer c.close()
		case "lists":
			newLists(mux, reg, db)
		case "query":
			newQuery(mux, reg, db)
		case "import":
			imp, err := newImport(ctx, mux, reg, db)
			if err != nil {
				return err
			}
			defer imp.close()
		default:
			return errUnknownService(name)
		}
	}
	return service.Serve(":"+service.EnvString("PORT", "8080"), mux, reg)
}
