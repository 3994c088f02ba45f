package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

// circulation checks items out and in (asking the users service for the patron's automated
// blocks first) and serves the patron requests of patron.go. Settings:
//
//	INVENTORY_URL, USERS_URL, PERMISSIONS_URL  the services it calls (http://<name>:8080)
//	HTTP_MAXPOOLSIZE                           connections per called service (10)
//	KAFKA_TOPIC                                topic of loan events (circulation.loans)
type circulation struct {
	d                       *db
	client                  *http.Client
	inventory, users, perms string
	kafka                   *kgo.Client
	topic                   string
}

type loanRequest struct {
	ItemBarcode string `json:"itemBarcode"`
	UserBarcode string `json:"userBarcode"`
}

func newCirculation(mux *http.ServeMux, reg *service.Registry, d *db) (*circulation, error) {
	pool := service.EnvInt("HTTP_MAXPOOLSIZE", 10)
	c := &circulation{
		d: d,
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			MaxConnsPerHost: pool, MaxIdleConnsPerHost: pool,
		}},
		inventory: service.EnvString("INVENTORY_URL", "http://inventory:8080"),
		users:     service.EnvString("USERS_URL", "http://users:8080"),
		perms:     service.EnvString("PERMISSIONS_URL", "http://permissions:8080"),
		topic:     service.EnvString("KAFKA_TOPIC", "circulation.loans"),
	}
	var err error
	if c.kafka, err = kafkaClient(); err != nil {
		return nil, err
	}
	d.handle(reg, mux, "POST /circulation/check-out", "check_out", c.checkOut)
	d.handle(reg, mux, "POST /circulation/check-in", "check_in", c.checkIn)
	c.patronRoutes(mux, reg)
	return c, nil
}

func (c *circulation) close() {
	if c.kafka != nil {
		c.kafka.Close()
	}
}

// kafkaClient connects to KAFKA_BOOTSTRAP, or returns nil when it is empty.
func kafkaClient(opts ...kgo.Opt) (*kgo.Client, error) {
	seeds := service.EnvString("KAFKA_BOOTSTRAP", "")
	if seeds == "" {
		return nil, nil
	}
	opts = append([]kgo.Opt{kgo.SeedBrokers(strings.Split(seeds, ",")...), kgo.AllowAutoTopicCreation(),
		kgo.ProduceRequestTimeout(5 * time.Second), kgo.RecordDeliveryTimeout(10 * time.Second)}, opts...)
	return kgo.NewClient(opts...)
}

// call does one request to another service for the tenant; out, when not nil, receives the JSON
// body of a 2xx answer.
func (c *circulation) call(ctx context.Context, method, url, tenant string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-Tenant", tenant)
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode/100 == 2 && out != nil {
		return resp.StatusCode, json.NewDecoder(resp.Body).Decode(out)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func (c *circulation) decode(w http.ResponseWriter, r *http.Request) (loanRequest, bool) {
	var lr loanRequest
	if err := json.NewDecoder(r.Body).Decode(&lr); err != nil || lr.ItemBarcode == "" {
		service.WriteError(w, http.StatusBadRequest, "want {\"itemBarcode\": ..., \"userBarcode\": ...}")
		return lr, false
	}
	return lr, true
}

func (c *circulation) checkOut(w http.ResponseWriter, r *http.Request, t string) error {
	lr, ok := c.decode(w, r)
	if !ok {
		return nil
	}
	ctx := r.Context()
	if err := c.checkBlocks(r, t, lr.UserBarcode); err != nil {
		return err
	}
	var item struct {
		Status string `json:"status"`
	}
	for _, step := range []struct {
		url string
		out any
	}{
		{c.users + "/users/" + lr.UserBarcode, nil},
		{c.perms + "/perms/" + lr.UserBarcode, nil},
		{c.inventory + "/items/" + lr.ItemBarcode, &item},
	} {
		code, err := c.call(ctx, http.MethodGet, step.url, t, nil, step.out)
		if err != nil {
			return err
		}
		if code == http.StatusNotFound {
			return fmt.Errorf("%s: %w", step.url, errNotFound)
		}
		if code != http.StatusOK {
			return fmt.Errorf("%s answered %d", step.url, code)
		}
	}
	if item.Status != "Available" {
		return fmt.Errorf("item %s is %s: %w", lr.ItemBarcode, item.Status, errConflict)
	}
	var loanID int64
	if err := c.d.writer.QueryRow(ctx, "INSERT INTO "+t+".loans (item_barcode, user_barcode) VALUES ($1, $2) RETURNING id",
		lr.ItemBarcode, lr.UserBarcode).Scan(&loanID); err != nil {
		return err
	}
	if err := c.setStatus(ctx, t, lr.ItemBarcode, "Checked out"); err != nil {
		return err
	}
	if err := c.publish(ctx, t, "check-out", lr, loanID); err != nil {
		return err
	}
	service.WriteJSON(w, http.StatusCreated, map[string]any{keyLoanID: loanID, keyItemBarcode: lr.ItemBarcode})
	return nil
}

func (c *circulation) checkIn(w http.ResponseWriter, r *http.Request, t string) error {
	lr, ok := c.decode(w, r)
	if !ok {
		return nil
	}
	ctx := r.Context()
	var loanID int64
	err := c.d.writer.QueryRow(ctx, "UPDATE "+t+".loans SET in_at = now() WHERE item_barcode = $1 AND in_at IS NULL RETURNING id",
		lr.ItemBarcode).Scan(&loanID)
	if err != nil {
		return err
	}
	if err := c.setStatus(ctx, t, lr.ItemBarcode, "Available"); err != nil {
		return err
	}
	if err := c.publish(ctx, t, "check-in", lr, loanID); err != nil {
		return err
	}
	service.WriteJSON(w, http.StatusOK, map[string]any{keyLoanID: loanID, keyItemBarcode: lr.ItemBarcode})
	return nil
}

func (c *circulation) setStatus(ctx context.Context, t, barcode, status string) error {
	code, err := c.call(ctx, http.MethodPut, c.inventory+"/items/"+barcode+"/status", t, map[string]string{"status": status}, nil)
	if err != nil {
		return err
	}
	if code != http.StatusNoContent {
		return fmt.Errorf("inventory answered %d to a status update", code)
	}
	return nil
}

func (c *circulation) publish(ctx context.Context, t, kind string, lr loanRequest, loanID int64) error {
	if c.kafka == nil {
		return nil
	}
	v, err := json.Marshal(map[string]any{"type": kind, keyTenant: t, keyLoanID: loanID, keyItemBarcode: lr.ItemBarcode,
		"userBarcode": lr.UserBarcode, "at": time.Now().UTC()})
	if err != nil {
		return err
	}
	return c.kafka.ProduceSync(ctx, &kgo.Record{Topic: c.topic, Key: []byte(lr.ItemBarcode), Value: v}).FirstErr()
}
