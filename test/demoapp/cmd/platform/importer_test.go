package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

// TestCreateThenUpdateImport runs the import through a Kafka (kfake, the franz-go project's
// in-process broker) into a real PostgreSQL: a Create import adds its records, an Update import
// (keys= of the first) overwrites the same rows, counted under its own run, and the consumer
// lag reads 0 once every record is stored.
func TestCreateThenUpdateImport(t *testing.T) {
	url := startPostgres(t)
	kafka, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "import.records"))
	if err != nil {
		t.Fatal(err)
	}
	defer kafka.Close()
	t.Setenv("DB_WRITER_URL", url)
	t.Setenv("TENANTS", "diku")
	t.Setenv("WORK_ROUNDS", "1")
	t.Setenv("KAFKA_BOOTSTRAP", strings.Join(kafka.ListenAddrs(), ","))
	ctx := context.Background()
	d, err := openDB(ctx, "import")
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	if err := d.migrate(ctx); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	reg := service.NewRegistry("import")
	im, err := newImport(ctx, mux, reg, d)
	if err != nil {
		t.Fatal(err)
	}
	defer im.close()
	srv := httptest.NewServer(mux)
	defer srv.Close()

	waitCount := func(run string, want float64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := call(t, srv, http.MethodGet, "/import/count?run="+run, "", http.StatusOK)["records"]
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s: %v records stored after 30 s, want %v", run, got, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	call(t, srv, http.MethodPost, "/import/produce?n=200&run=create1", "", http.StatusAccepted)
	waitCount("create1", 200)
	call(t, srv, http.MethodPost, "/import/produce?n=200&run=update1&keys=create1", "", http.StatusAccepted)
	waitCount("update1", 200)
	waitCount("create1", 0) // every row now carries the update's run
	waitCount("", 200)      // and no row was added
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series, lag := 0, 0.0
	for _, f := range families {
		if f.GetName() != "platform_kafka_consumer_lag" {
			continue
		}
		for _, m := range f.GetMetric() {
			series++
			lag += m.GetGauge().GetValue()
		}
	}
	if series == 0 || lag != 0 {
		t.Errorf("consumer lag %v over %d partitions after every record was stored, want 0 over at least 1", lag, series)
	}
}
