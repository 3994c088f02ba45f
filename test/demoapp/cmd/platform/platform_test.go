package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

func TestTenantFromHeader(t *testing.T) {
	d := &db{tenants: map[string]bool{"diku": true, "east": true}, tenantList: []string{"diku", "east"}}
	for _, c := range []struct {
		header, want string
		wantErr      bool
	}{
		{"", "diku", false},
		{"east", "east", false},
		{"west", "", true},
		{"diku; DROP SCHEMA diku", "", true},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if c.header != "" {
			r.Header.Set("X-Tenant", c.header)
		}
		got, err := d.tenant(r)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("X-Tenant %q: got %q, %v; want %q, error %v", c.header, got, err, c.want, c.wantErr)
		}
	}
}

func TestGatewayAndEdgeRoute(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Tenant"))
	}))
	defer backend.Close()
	t.Setenv("GATEWAY_ROUTES", "items="+backend.URL)
	gwMux := http.NewServeMux()
	newGateway(gwMux, service.NewRegistry("gateway"))
	gw := httptest.NewServer(gwMux)
	defer gw.Close()
	t.Setenv("UPSTREAM_URL", gw.URL)
	t.Setenv("WORK_ROUNDS", "1")
	edgeMux := http.NewServeMux()
	newEdge(edgeMux, service.NewRegistry("edge"))
	edge := httptest.NewServer(edgeMux)
	defer edge.Close()

	req, _ := http.NewRequest(http.MethodGet, edge.URL+"/edge/items/ITEM-000001", nil)
	req.Header.Set("X-Tenant", "east")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if got, want := string(body), "GET /items/ITEM-000001 east"; got != want {
		t.Errorf("edge -> gateway -> items answered %q, want %q", got, want)
	}
}
