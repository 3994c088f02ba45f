package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

// Keys of the JSON answers and metric labels used in several places.
const (
	keyTenant      = "tenant"
	keyName        = "name"
	keyItemBarcode = "itemBarcode"
	keyLoanID      = "loanId"
	keyPatron      = "patron"
)

type errUnknownService string

func (e errUnknownService) Error() string { return fmt.Sprintf("unknown SERVICE %q", string(e)) }

// tenantName is what a tenant (and so its schema) may be called.
var tenantName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,30}$`)

// db holds the writer pool and the pool reads use: the reader's when READ_FROM_REPLICA is true,
// the writer's otherwise.
type db struct {
	writer, reads *pgxpool.Pool
	reader        *pgxpool.Pool // nil unless reads go to a replica
	tenants       map[string]bool
	tenantList    []string
	rounds        int
}

func openPool(ctx context.Context, url, app string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parsing the database URL: %w", err)
	}
	cfg.MaxConns = int32(service.EnvInt("DB_POOL_MAX", 4))
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	return pgxpool.NewWithConfig(ctx, cfg)
}

func openDB(ctx context.Context, name string) (*db, error) {
	writerURL := service.EnvString("DB_WRITER_URL", "")
	if writerURL == "" {
		return nil, errors.New("DB_WRITER_URL is required")
	}
	d := &db{tenants: map[string]bool{}, rounds: service.WorkRounds(2000)}
	for _, t := range strings.Split(service.EnvString("TENANTS", "diku,east,west"), ",") {
		if !tenantName.MatchString(t) {
			return nil, fmt.Errorf("tenant %q: want lower-case letters, digits and _", t)
		}
		d.tenants[t] = true
		d.tenantList = append(d.tenantList, t)
	}
	var err error
	if d.writer, err = openPool(ctx, writerURL, name); err != nil {
		return nil, err
	}
	d.reads = d.writer
	if service.EnvString("READ_FROM_REPLICA", "false") == "true" {
		readerURL := service.EnvString("DB_READER_URL", "")
		if readerURL == "" {
			return nil, errors.New("READ_FROM_REPLICA=true needs DB_READER_URL")
		}
		if d.reader, err = openPool(ctx, readerURL, name); err != nil {
			return nil, err
		}
		d.reads = d.reader
	}
	slog.Info("Database pools", "readFromReplica", d.reader != nil, "maxConns", d.writer.Config().MaxConns)
	return d, nil
}

func (d *db) close() {
	d.writer.Close()
	if d.reader != nil {
		d.reader.Close()
	}
}

// tenant returns the schema of the request's tenant (header X-Tenant, else the first tenant).
func (d *db) tenant(r *http.Request) (string, error) {
	t := r.Header.Get("X-Tenant")
	if t == "" {
		return d.tenantList[0], nil
	}
	if !d.tenants[t] {
		return "", fmt.Errorf("unknown tenant %q", t)
	}
	return t, nil
}

// schema is the DDL of one tenant; %[1]s is the schema.
const schema = `
CREATE SCHEMA IF NOT EXISTS %[1]s;
CREATE TABLE IF NOT EXISTS %[1]s.items (
  id bigserial PRIMARY KEY, barcode text UNIQUE NOT NULL, title text NOT NULL,
  status text NOT NULL DEFAULT 'Available', updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS %[1]s.users (
  id bigserial PRIMARY KEY, barcode text UNIQUE NOT NULL, name text NOT NULL, active boolean NOT NULL DEFAULT true);
CREATE TABLE IF NOT EXISTS %[1]s.permissions (
  user_barcode text NOT NULL, permission text NOT NULL, PRIMARY KEY (user_barcode, permission));
CREATE TABLE IF NOT EXISTS %[1]s.loans (
  id bigserial PRIMARY KEY, item_barcode text NOT NULL, user_barcode text NOT NULL,
  out_at timestamptz NOT NULL DEFAULT now(), in_at timestamptz);
CREATE INDEX IF NOT EXISTS loans_open ON %[1]s.loans (item_barcode) WHERE in_at IS NULL;
CREATE INDEX IF NOT EXISTS loans_user_open ON %[1]s.loans (user_barcode) WHERE in_at IS NULL;
CREATE TABLE IF NOT EXISTS %[1]s.holds (
  id bigserial PRIMARY KEY, user_barcode text NOT NULL, item_barcode text NOT NULL, at timestamptz NOT NULL DEFAULT now());
CREATE INDEX IF NOT EXISTS holds_user ON %[1]s.holds (user_barcode);
CREATE TABLE IF NOT EXISTS %[1]s.lists (
  id bigserial PRIMARY KEY, name text UNIQUE NOT NULL, status_filter text NOT NULL DEFAULT 'Available',
  is_refreshing boolean NOT NULL DEFAULT false, refreshed_at timestamptz, record_count bigint NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS %[1]s.list_contents (list_id bigint NOT NULL, item_id bigint NOT NULL);
CREATE INDEX IF NOT EXISTS list_contents_list ON %[1]s.list_contents (list_id);
CREATE TABLE IF NOT EXISTS %[1]s.imported_records (
  id bigserial PRIMARY KEY, source_key text UNIQUE NOT NULL, payload jsonb NOT NULL, imported_at timestamptz NOT NULL DEFAULT now());
`

// migrate creates every tenant's schema. Services start together, so the DDL runs under an
// advisory lock: CREATE ... IF NOT EXISTS is not safe against a concurrent twin.
func (d *db) migrate(ctx context.Context) error {
	var lastErr error
	for range 60 {
		if lastErr = d.migrateOnce(ctx); lastErr == nil {
			return nil
		}
		slog.Info("Waiting for the database", "err", lastErr)
		time.Sleep(2 * time.Second)
	}
	return lastErr
}

func (d *db) migrateOnce(ctx context.Context) error {
	conn, err := d.writer.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(7240)"); err != nil {
		return err
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(7240)") }()
	for _, t := range d.tenantList {
		if _, err := conn.Exec(ctx, fmt.Sprintf(schema, t)); err != nil {
			return fmt.Errorf("schema %s: %w", t, err)
		}
	}
	return nil
}

// work burns the request's CPU share (business logic stand-in).
func (d *db) work(seed string) { service.Work(d.rounds, seed) }
