package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

// platformServer serves inventory, users, permissions and circulation on one test server
// (circulation calls the others through it), on a real PostgreSQL.
func platformServer(t *testing.T, release string) (*httptest.Server, *db) {
	t.Helper()
	url := startPostgres(t)
	t.Setenv("DB_WRITER_URL", url)
	t.Setenv("TENANTS", "diku")
	t.Setenv("WORK_ROUNDS", "1")
	t.Setenv("PATRON_BLOCKS_WORK_ROUNDS", "1")
	t.Setenv("RELEASE", release)
	t.Setenv("KAFKA_BOOTSTRAP", "")
	d, err := openDB(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.close)
	if err := d.migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for _, name := range []string{"INVENTORY_URL", "USERS_URL", "PERMISSIONS_URL"} {
		t.Setenv(name, srv.URL)
	}
	reg := service.NewRegistry("test")
	newInventory(mux, reg, d)
	newUsers(mux, reg, d)
	newPermissions(mux, reg, d)
	if _, err := newCirculation(mux, reg, d); err != nil {
		t.Fatal(err)
	}
	return srv, d
}

func call(t *testing.T, srv *httptest.Server, method, path, body string, want int) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	req.Header.Set("X-Tenant", "diku")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s answered %d, want %d: %s", method, path, resp.StatusCode, want, data)
	}
	out := map[string]any{}
	_ = json.Unmarshal(data, &out)
	return out
}

// TestPatronRequestsAndBlocksOnPostgres runs the workflow the edge and load studies drive: a
// check-out asks for the patron's blocks, the account shows the open loan and the hold placed,
// and both releases count the same open loans (r2 only the costlier way). The setup's reset
// deletes the holds and the closed loans, so every run starts from the same tables.
func TestPatronRequestsAndBlocksOnPostgres(t *testing.T) {
	for _, release := range []string{"r1", "r2"} {
		t.Run(release, func(t *testing.T) {
			srv, d := platformServer(t, release)
			call(t, srv, http.MethodPost, "/items/seed?n=10", "", http.StatusOK)
			call(t, srv, http.MethodPost, "/users/seed?n=3", "", http.StatusOK)
			for _, item := range []string{"ITEM-000001", "ITEM-000002"} {
				call(t, srv, http.MethodPost, "/circulation/check-out", `{"itemBarcode":"`+item+`","userBarcode":"USER-000001"}`, http.StatusCreated)
			}
			call(t, srv, http.MethodPost, "/circulation/check-in", `{"itemBarcode":"ITEM-000002"}`, http.StatusOK)
			blocks := call(t, srv, http.MethodGet, "/users/USER-000001/blocks", "", http.StatusOK)
			if blocks["openLoans"] != 1.0 || blocks["release"] != release || blocks["blocked"] != false {
				t.Errorf("blocks %v, want 1 open loan, release %s, not blocked", blocks, release)
			}
			call(t, srv, http.MethodPost, "/patron/account/USER-000001/instance/ITEM-000005/hold", "{}", http.StatusCreated)
			call(t, srv, http.MethodPost, "/patron/account/USER-000001/instance/ITEM-999999/hold", "{}", http.StatusNotFound)
			account := call(t, srv, http.MethodGet, "/patron/account/USER-000001?includeLoans=true", "", http.StatusOK)
			if account["loans"] != 1.0 || account["holds"] != 1.0 {
				t.Errorf("account %v, want 1 loan and 1 hold", account)
			}
			call(t, srv, http.MethodGet, "/patron/account/NOBODY", "", http.StatusNotFound)
			reset := call(t, srv, http.MethodPost, "/patron/reset", "", http.StatusOK)
			if reset["holds"] != 1.0 || reset["closedLoans"] != 1.0 {
				t.Errorf("reset %v, want 1 hold and 1 closed loan deleted", reset)
			}
			var loans int
			if err := d.writer.QueryRow(context.Background(), "SELECT count(*) FROM diku.loans").Scan(&loans); err != nil {
				t.Fatal(err)
			}
			if loans != 1 {
				t.Errorf("%d loans after the reset, want the 1 open one", loans)
			}
		})
	}
}
