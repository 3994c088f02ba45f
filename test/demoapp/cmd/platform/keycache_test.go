package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

func TestKeyCacheTTLAndCapacity(t *testing.T) {
	now := time.Unix(0, 0)
	c := newKeyCache(2, time.Minute, 10*time.Second)
	c.now = func() time.Time { return now }
	c.put("a", true)
	c.put("x", false)
	if found, hit := c.get("a"); !hit || !found {
		t.Fatalf("a: found %v hit %v, want a cached key", found, hit)
	}
	if found, hit := c.get("x"); !hit || found {
		t.Fatalf("x: found %v hit %v, want a cached null", found, hit)
	}
	now = now.Add(11 * time.Second) // past the null TTL, inside the key TTL
	if _, hit := c.get("x"); hit {
		t.Error("the null entry outlived NULL_KEY_CACHE_TTL_MS")
	}
	if _, hit := c.get("a"); !hit {
		t.Error("the key expired before KEY_CACHE_TTL_MS")
	}
	c.put("b", true)
	c.put("c", true) // capacity 2: evicts the least recently used, a
	if _, hit := c.get("a"); hit {
		t.Error("a should have been evicted")
	}
	if c.len() != 2 {
		t.Errorf("len %d, want 2", c.len())
	}
	now = now.Add(time.Minute)
	if _, hit := c.get("b"); hit {
		t.Error("b outlived KEY_CACHE_TTL_MS")
	}
	off := newKeyCache(0, time.Minute, time.Minute)
	off.put("a", true)
	if _, hit := off.get("a"); hit {
		t.Error("capacity 0 cached an entry")
	}
}

// TestEdgeKeyCacheCostsAFetchPerMiss drives the edge with more patrons than its cache holds: a
// cache smaller than the patrons cycled through misses on every request (each miss a call to
// the users service), one as large hits after the first round; an unknown patron is refused
// and its null entry spares the next lookup.
func TestEdgeKeyCacheCostsAFetchPerMiss(t *testing.T) {
	var userCalls atomic.Int64
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.URL.Path) > len("/users/") && r.URL.Path[:len("/users/")] == "/users/" {
			userCalls.Add(1)
			if r.URL.Path == "/users/NOBODY" {
				w.WriteHeader(http.StatusNotFound)
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer backend.Close()
	t.Setenv("UPSTREAM_URL", backend.URL)
	t.Setenv("WORK_ROUNDS", "1")
	t.Setenv("KEY_FETCH_WORK_ROUNDS", "1")
	get := func(edge *httptest.Server, patron string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, edge.URL+"/edge/patron/account/"+patron, nil)
		req.Header.Set("X-Tenant", "diku")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		capacity    string
		wantFetches int64 // key fetches for 3 rounds over 4 patrons
	}{
		{"2", 12}, // LRU over a cycle larger than the cache: every lookup misses
		{"4", 4},
	} {
		t.Run("capacity-"+c.capacity, func(t *testing.T) {
			userCalls.Store(0)
			t.Setenv("KEY_CACHE_CAPACITY", c.capacity)
			mux := http.NewServeMux()
			newEdge(mux, service.NewRegistry("edge"))
			edge := httptest.NewServer(mux)
			defer edge.Close()
			for range 3 {
				for i := range 4 {
					if code := get(edge, fmt.Sprintf("USER-%06d", i+1)); code != http.StatusOK {
						t.Fatalf("answered %d", code)
					}
				}
			}
			// The account requests themselves reach the backend under /patron/, not /users/.
			if got := userCalls.Load(); got != c.wantFetches {
				t.Errorf("%d key fetches, want %d", got, c.wantFetches)
			}
		})
	}
	t.Run("unknown-patron", func(t *testing.T) {
		userCalls.Store(0)
		mux := http.NewServeMux()
		newEdge(mux, service.NewRegistry("edge"))
		edge := httptest.NewServer(mux)
		defer edge.Close()
		for range 3 {
			if code := get(edge, "NOBODY"); code != http.StatusUnauthorized {
				t.Fatalf("an unknown patron answered %d, want 401", code)
			}
		}
		if got := userCalls.Load(); got != 1 {
			t.Errorf("%d key fetches for an unknown patron asked 3 times, want 1 (the null entry)", got)
		}
	})
}

func TestPatronOf(t *testing.T) {
	for path, want := range map[string]string{
		"/patron/account/USER-1":                      "USER-1",
		"/patron/account/USER-1/instance/ITEM-2/hold": "USER-1",
		"/patron/account/":                            "",
		"/circulation/check-out":                      "",
	} {
		if got, _ := patronOf(path); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}
