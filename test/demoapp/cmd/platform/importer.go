package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

// importer consumes records from Kafka and writes them to the tenant's imported_records.
// Settings:
//
//	IMPORT_TOPIC  topic of the records (import.records)
//	IMPORT_GROUP  consumer group (data-import)
type importer struct {
	d        *db
	topic    string
	consumer *kgo.Client
	producer *kgo.Client
	imported *prometheus.CounterVec
	lag      *prometheus.GaugeVec
	group    string
	cancel   context.CancelFunc
	done     chan struct{}
}

// importRecord is one record on the import topic.
type importRecord struct {
	Key     string          `json:"key"`
	Tenant  string          `json:"tenant"`
	Payload json.RawMessage `json:"payload"`
}

func newImport(ctx context.Context, mux *http.ServeMux, reg *service.Registry, d *db) (*importer, error) {
	im := &importer{d: d, topic: service.EnvString("IMPORT_TOPIC", "import.records"), done: make(chan struct{}),
		group: service.EnvString("IMPORT_GROUP", "data-import"),
		imported: promauto.With(reg).NewCounterVec(prometheus.CounterOpts{
			Name: "platform_import_records_total",
			Help: "Records consumed from Kafka and written to the database, by tenant.",
		}, []string{keyTenant}),
		lag: promauto.With(reg).NewGaugeVec(prometheus.GaugeOpts{
			Name: "platform_kafka_consumer_lag",
			Help: "Records of a partition behind its high watermark at the consumer group's last fetch, by group, topic and partition.",
		}, []string{"group", "topic", "partition"})}
	var err error
	im.consumer, err = kafkaClient(kgo.ConsumerGroup(im.group),
		kgo.ConsumeTopics(im.topic), kgo.DisableAutoCommit())
	if err != nil {
		return nil, err
	}
	if im.consumer == nil {
		return nil, errors.New("the import service needs KAFKA_BOOTSTRAP")
	}
	if im.producer, err = kafkaClient(kgo.ProducerLinger(5 * time.Millisecond)); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	im.cancel = cancel
	go im.consume(runCtx)
	d.handle(reg, mux, "POST /import/produce", "produce_records", im.produce)
	d.handle(reg, mux, "GET /import/count", "count_records", im.count)
	d.handle(reg, mux, "POST /import/reset", "reset_records", im.reset)
	return im, nil
}

func (im *importer) close() {
	im.cancel()
	<-im.done
	im.consumer.Close()
	im.producer.Close()
}

func (im *importer) consume(ctx context.Context) {
	defer close(im.done)
	for ctx.Err() == nil {
		fetches := im.consumer.PollRecords(ctx, 500)
		for _, e := range fetches.Errors() {
			if !errors.Is(e.Err, context.Canceled) {
				slog.Warn("Fetch error", "topic", e.Topic, "partition", e.Partition, "err", e.Err)
			}
		}
		im.recordLag(fetches)
		recs := fetches.Records()
		if len(recs) == 0 {
			continue
		}
		for {
			err := im.write(ctx, recs)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
			slog.Warn("Writing imported records failed, retrying", "records", len(recs), "err", err)
			time.Sleep(time.Second)
		}
		if err := im.consumer.CommitRecords(ctx, recs...); err != nil && ctx.Err() == nil {
			slog.Warn("Committing offsets failed", "err", err)
		}
	}
}

// recordLag sets each fetched partition's lag: its high watermark less the offset after the
// last record fetched (0 once the consumer has caught up).
func (im *importer) recordLag(fetches kgo.Fetches) {
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		lag := max(p.HighWatermark-(p.Records[len(p.Records)-1].Offset+1), 0)
		im.lag.WithLabelValues(im.group, p.Topic, strconv.Itoa(int(p.Partition))).Set(float64(lag))
	})
}

// write inserts one poll's records in one transaction (idempotent by key: a redelivery after a
// failed commit does not count twice).
func (im *importer) write(ctx context.Context, recs []*kgo.Record) error {
	batch := &pgx.Batch{}
	perTenant := map[string]int{}
	for _, r := range recs {
		var ir importRecord
		if err := json.Unmarshal(r.Value, &ir); err != nil || !im.d.tenants[ir.Tenant] || ir.Key == "" {
			slog.Warn("Skipping a malformed import record", "offset", r.Offset)
			continue
		}
		if len(ir.Payload) == 0 {
			ir.Payload = json.RawMessage("{}")
		}
		im.d.work(ir.Key)
		batch.Queue("INSERT INTO "+ir.Tenant+".imported_records (source_key, payload) VALUES ($1, $2) "+
			"ON CONFLICT (source_key) DO UPDATE SET payload = EXCLUDED.payload, imported_at = now()", ir.Key, ir.Payload)
		perTenant[ir.Tenant]++
	}
	if batch.Len() == 0 {
		return nil
	}
	err := pgx.BeginFunc(ctx, im.d.writer, func(tx pgx.Tx) error { return tx.SendBatch(ctx, batch).Close() })
	if err != nil {
		return err
	}
	for t, n := range perTenant {
		im.imported.WithLabelValues(t).Add(float64(n))
	}
	return nil
}

// produce publishes n records (?n=, default 1000) for the tenant, keys KEYS-1..KEYS-n where KEYS
// is ?keys= (default RUN, ?run=, itself defaulting to the current time), each marked with RUN, and
// answers when Kafka has acknowledged them all. Keys of records already imported make an update
// import (each record overwrites its row); new keys a create import.
func (im *importer) produce(w http.ResponseWriter, r *http.Request, t string) error {
	n, err := count(r, 1000)
	if err != nil {
		service.WriteError(w, http.StatusBadRequest, "%v", err)
		return nil
	}
	run := r.URL.Query().Get("run")
	if run == "" {
		run = fmt.Sprint(time.Now().UnixNano())
	}
	keys := r.URL.Query().Get("keys")
	if keys == "" {
		keys = run
	}
	recs := make([]*kgo.Record, 0, n)
	for i := range n {
		v, err := json.Marshal(importRecord{Key: fmt.Sprintf("%s-%s-%d", t, keys, i+1), Tenant: t,
			Payload: json.RawMessage(fmt.Sprintf(`{"title":"Imported %d","run":%q}`, i+1, run))})
		if err != nil {
			return err
		}
		recs = append(recs, &kgo.Record{Topic: im.topic, Value: v})
	}
	if err := im.producer.ProduceSync(r.Context(), recs...).FirstErr(); err != nil {
		return err
	}
	service.WriteJSON(w, http.StatusAccepted, map[string]any{keyTenant: t, "run": run, "records": n})
	return nil
}

// count reports how many records of ?run= (all when empty) the tenant holds.
func (im *importer) count(w http.ResponseWriter, r *http.Request, t string) error {
	var n int64
	err := im.d.writer.QueryRow(r.Context(), "SELECT count(*) FROM "+t+".imported_records WHERE $1 = '' OR payload->>'run' = $1",
		r.URL.Query().Get("run")).Scan(&n)
	if err != nil {
		return err
	}
	service.WriteJSON(w, http.StatusOK, map[string]any{keyTenant: t, "records": n})
	return nil
}

// reset removes the tenant's imported records (a setup step before an import run).
func (im *importer) reset(w http.ResponseWriter, r *http.Request, t string) error {
	tag, err := im.d.writer.Exec(r.Context(), "DELETE FROM "+t+".imported_records")
	if err != nil {
		return err
	}
	service.WriteJSON(w, http.StatusOK, map[string]any{keyTenant: t, "deleted": tag.RowsAffected()})
	return nil
}
