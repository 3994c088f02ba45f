// Command circulation is the demo's front service: check-out and check-in of items. Each request
// does CPU work (loan policy evaluation), calls inventory through a connection pool of
// HTTP_MAXPOOLSIZE connections, and publishes a loan event to Kafka before answering. Its
// latency therefore moves with the knobs perfexp turns: CPU limits (the work is throttled),
// replicas (more pods, more CPU), the pool size (requests queue for a connection) and the Kafka
// cluster it talks to.
//
// Environment:
//
//	PORT                     listen port (8080)
//	INVENTORY_URL            base URL of inventory (http://inventory:8080)
//	HTTP_MAXPOOLSIZE         connections to inventory; requests beyond it wait (10)
//	KAFKA_BOOTSTRAP_SERVERS  comma-separated brokers; empty disables events
//	KAFKA_TOPIC              topic of loan events (circulation.loans)
//	WORK_ROUNDS              CPU work per request in SHA-256 rounds (20000, about 2 ms on one core)
//	LEAK_BYTES_PER_REQUEST   bytes kept for good per request, a deliberate memory leak for soaks (0)
//	MEMORY_BALLAST_BYTES     bytes held resident for life, a steady footprint like a real service's (0)
//	RELEASE_CPU_WORK_PERCENT extra CPU work per request in percent of WORK_ROUNDS, a slower release (0)
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

type loanRequest struct {
	ItemBarcode string `json:"itemBarcode"`
	UserBarcode string `json:"userBarcode,omitempty"`
}

type loanEvent struct {
	Type        string    `json:"type"`
	LoanID      string    `json:"loanId,omitempty"`
	ItemBarcode string    `json:"itemBarcode"`
	UserBarcode string    `json:"userBarcode,omitempty"`
	At          time.Time `json:"at"`
}

type server struct {
	inventoryURL string
	client       *http.Client
	kafka        *kgo.Client
	rounds       int
	poolWait     prometheus.Histogram
	events       *prometheus.CounterVec
}

func main() {
	port := service.EnvString("PORT", "8080")
	pool := service.EnvInt("HTTP_MAXPOOLSIZE", 10)
	if pool < 1 {
		pool = 1
	}
	service.HoldBallast()
	reg := service.NewRegistry("circulation")
	s := &server{
		inventoryURL: strings.TrimRight(service.EnvString("INVENTORY_URL", "http://inventory:8080"), "/"),
		rounds:       service.WorkRounds(20000),
		client: &http.Client{
			Timeout: 30 * time.Second,
			// The pool: at most HTTP_MAXPOOLSIZE connections to inventory; a request that
			// finds them all busy waits for one, which is where a small pool shows up as latency.
			Transport: &http.Transport{
				MaxConnsPerHost:     pool,
				MaxIdleConnsPerHost: pool,
				IdleConnTimeout:     90 * time.Second,
			},
		},
		poolWait: promauto.With(reg).NewHistogram(prometheus.HistogramOpts{
			Name:                        "demo_inventory_pool_wait_seconds",
			Help:                        "Time a request waited for a connection of the inventory pool.",
			Buckets:                     prometheus.ExponentialBuckets(0.0001, 4, 10),
			NativeHistogramBucketFactor: 1.1,
		}),
		events: promauto.With(reg).NewCounterVec(prometheus.CounterOpts{
			Name: "demo_loan_events_total",
			Help: "Loan events published to Kafka, by result.",
		}, []string{"result"}),
	}
	promauto.With(reg).NewGauge(prometheus.GaugeOpts{
		Name: "demo_inventory_pool_size", Help: "HTTP_MAXPOOLSIZE: connections to inventory.",
	}).Set(float64(pool))

	if brokers := service.EnvString("KAFKA_BOOTSTRAP_SERVERS", ""); brokers != "" {
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(strings.Split(brokers, ",")...),
			kgo.DefaultProduceTopic(service.EnvString("KAFKA_TOPIC", "circulation.loans")),
			kgo.AllowAutoTopicCreation(),
			kgo.RequiredAcks(kgo.AllISRAcks()),
		)
		if err != nil {
			slog.Error("Invalid Kafka configuration", "bootstrap", brokers, "err", err)
			os.Exit(2)
		}
		defer cl.Close()
		s.kafka = cl
		slog.Info("Publishing loan events", "bootstrap", brokers)
	} else {
		slog.Info("KAFKA_BOOTSTRAP_SERVERS is empty: loan events are not published")
	}

	mux := http.NewServeMux()
	mux.HandleFunc("POST /circulation/check-out-by-barcode", reg.Instrument("check-out", s.checkOut))
	mux.HandleFunc("POST /circulation/check-in-by-barcode", reg.Instrument("check-in", s.checkIn))
	if err := service.Serve(":"+port, mux, reg); err != nil {
		slog.Error("Server failed", "err", err)
		os.Exit(1)
	}
}

func (s *server) checkOut(w http.ResponseWriter, r *http.Request) {
	req, ok := decode(w, r)
	if !ok {
		return
	}
	if req.UserBarcode == "" {
		service.WriteError(w, http.StatusUnprocessableEntity, "userBarcode is required")
		return
	}
	// Loan policy evaluation: the CPU-bound part of the request.
	service.Work(s.rounds, req.ItemBarcode+req.UserBarcode)
	if code, err := s.inventory(r.Context(), req.ItemBarcode, "check-out"); err != nil {
		service.WriteError(w, code, "inventory: %v", err)
		return
	}
	ev := loanEvent{Type: "check-out", LoanID: newID(), ItemBarcode: req.ItemBarcode, UserBarcode: req.UserBarcode, At: time.Now().UTC()}
	if err := s.publish(r.Context(), ev); err != nil {
		service.WriteError(w, http.StatusServiceUnavailable, "publishing loan event: %v", err)
		return
	}
	service.WriteJSON(w, http.StatusCreated, ev)
}

func (s *server) checkIn(w http.ResponseWriter, r *http.Request) {
	req, ok := decode(w, r)
	if !ok {
		return
	}
	service.Work(s.rounds, req.ItemBarcode)
	if code, err := s.inventory(r.Context(), req.ItemBarcode, "check-in"); err != nil {
		service.WriteError(w, code, "inventory: %v", err)
		return
	}
	ev := loanEvent{Type: "check-in", ItemBarcode: req.ItemBarcode, At: time.Now().UTC()}
	if err := s.publish(r.Context(), ev); err != nil {
		service.WriteError(w, http.StatusServiceUnavailable, "publishing loan event: %v", err)
		return
	}
	service.WriteJSON(w, http.StatusOK, ev)
}

func decode(w http.ResponseWriter, r *http.Request) (loanRequest, bool) {
	var req loanRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil || req.ItemBarcode == "" {
		service.WriteError(w, http.StatusBadRequest, "want a JSON body with itemBarcode")
		return req, false
	}
	return req, true
}

// inventory calls inventory's item action and maps its failure to the status circulation
// answers with: a conflict stays a conflict, anything else is a bad gateway.
func (s *server) inventory(ctx context.Context, barcode, action string) (int, error) {
	start := time.Now()
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { s.poolWait.Observe(time.Since(start).Seconds()) }}
	url := fmt.Sprintf("%s/inventory/items/%s/%s", s.inventoryURL, barcode, action)
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, url, nil)
	if err != nil {
		return http.StatusBadRequest, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return http.StatusBadGateway, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	switch resp.StatusCode {
	case http.StatusOK:
		return http.StatusOK, nil
	case http.StatusConflict:
		return http.StatusConflict, fmt.Errorf("%s", strings.TrimSpace(string(body)))
	default:
		return http.StatusBadGateway, fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
}

// publish sends the event and waits for the broker's acknowledgement: the loan is only
// confirmed to the caller once it is recorded, so Kafka's latency is part of the request's.
func (s *server) publish(ctx context.Context, ev loanEvent) error {
	if s.kafka == nil {
		return nil
	}
	value, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err = s.kafka.ProduceSync(ctx, &kgo.Record{Key: []byte(ev.ItemBarcode), Value: value}).FirstErr()
	result := "ok"
	if err != nil {
		result = "error"
	}
	s.events.WithLabelValues(result).Inc()
	return err
}

func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
