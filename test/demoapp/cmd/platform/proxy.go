package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

// defaultRoutes maps a path's first segment to the service that serves it.
const defaultRoutes = "circulation=http://circulation:8080,items=http://inventory:8080,users=http://users:8080," +
	"perms=http://permissions:8080,lists=http://lists:8080,query=http://query:8080,import=http://import:8080," +
	"patron=http://circulation:8080"

func proxyTo(target string, transport http.RoundTripper) *httputil.ReverseProxy {
	u, err := url.Parse(target)
	if err != nil {
		panic(err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.Transport = transport
	return p
}

// newGateway routes /<segment>/... to the service GATEWAY_ROUTES names for it
// (segment=URL,...; defaultRoutes when unset). Settings: GATEWAY_POOL_SIZE connections per
// service (32).
func newGateway(mux *http.ServeMux, reg *service.Registry) {
	pool := service.EnvInt("GATEWAY_POOL_SIZE", 32)
	transport := &http.Transport{MaxConnsPerHost: pool, MaxIdleConnsPerHost: pool}
	for _, route := range strings.Split(service.EnvString("GATEWAY_ROUTES", defaultRoutes), ",") {
		seg, target, ok := strings.Cut(route, "=")
		if !ok {
			continue
		}
		mux.HandleFunc("/"+seg+"/", reg.Instrument("gateway_"+seg, proxyTo(target, transport).ServeHTTP))
	}
}

// newEdge is an edge API: /edge/<path> is forwarded to UPSTREAM_URL/<path> (http://gateway:8080)
// through a pool of EDGE_POOL_SIZE connections (8) with EDGE_TIMEOUT_MS per request (5000) and
// EDGE_IDLE_TIMEOUT_MS for idle connections (90000). A patron request (/edge/patron/account/
// {id}/...) is first checked against the patron's signing key, which the edge keeps in a key
// cache (see keyCache): KEY_CACHE_CAPACITY entries (1000), a found key for KEY_CACHE_TTL_MS
// (3600000), an unknown one for NULL_KEY_CACHE_TTL_MS (30000). A miss fetches the key from the
// users service (GET UPSTREAM_URL/users/{id}) and verifies it, KEY_FETCH_WORK_ROUNDS of CPU
// (20000); an unknown patron is answered 401.
func newEdge(mux *http.ServeMux, reg *service.Registry) {
	pool := service.EnvInt("EDGE_POOL_SIZE", 8)
	transport := &http.Transport{
		MaxConnsPerHost: pool, MaxIdleConnsPerHost: pool,
		IdleConnTimeout:       time.Duration(service.EnvInt("EDGE_IDLE_TIMEOUT_MS", 90000)) * time.Millisecond,
		ResponseHeaderTimeout: time.Duration(service.EnvInt("EDGE_TIMEOUT_MS", 5000)) * time.Millisecond,
	}
	upstream := service.EnvString("UPSTREAM_URL", "http://gateway:8080")
	p := proxyTo(upstream, transport)
	rounds := service.WorkRounds(2000)
	keys := &edgeKeys{
		cache: newKeyCache(service.EnvInt("KEY_CACHE_CAPACITY", 1000),
			time.Duration(service.EnvInt("KEY_CACHE_TTL_MS", 3600000))*time.Millisecond,
			time.Duration(service.EnvInt("NULL_KEY_CACHE_TTL_MS", 30000))*time.Millisecond),
		client: &http.Client{Transport: transport, Timeout: 10 * time.Second},
		users:  upstream + "/users/", rounds: service.EnvInt("KEY_FETCH_WORK_ROUNDS", 20000),
		lookups: promauto.With(reg).NewCounterVec(prometheus.CounterOpts{
			Name: "platform_edge_key_cache_lookups_total",
			Help: "Patron key lookups of the edge's key cache, by result (hit, null_hit, miss).",
		}, []string{"result"}),
	}
	promauto.With(reg).NewGaugeFunc(prometheus.GaugeOpts{
		Name: "platform_edge_key_cache_entries", Help: "Entries in the edge's key cache.",
	}, func() float64 { return float64(keys.cache.len()) })
	mux.HandleFunc("/edge/", reg.Instrument("edge", func(w http.ResponseWriter, r *http.Request) {
		service.Work(rounds, r.URL.Path)
		r.URL.Path = strings.TrimPrefix(r.URL.Path, "/edge")
		if id, ok := patronOf(r.URL.Path); ok {
			found, err := keys.check(r, id)
			if err != nil {
				service.WriteError(w, http.StatusBadGateway, "fetching the key of patron %s: %v", id, err)
				return
			}
			if !found {
				service.WriteError(w, http.StatusUnauthorized, "no key for patron %s", id)
				return
			}
		}
		p.ServeHTTP(w, r)
	}))
}

// patronOf returns the patron of a /patron/account/{id}[/...] path.
func patronOf(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/patron/account/")
	if !ok {
		return "", false
	}
	id, _, _ := strings.Cut(rest, "/")
	return id, id != ""
}

// edgeKeys checks a patron's key through the key cache.
type edgeKeys struct {
	cache   *keyCache
	client  *http.Client
	users   string
	rounds  int
	lookups *prometheus.CounterVec
}

func (k *edgeKeys) check(r *http.Request, id string) (bool, error) {
	tenant := r.Header.Get("X-Tenant")
	cacheKey := tenant + "/" + id
	if found, hit := k.cache.get(cacheKey); hit {
		if found {
			k.lookups.WithLabelValues("hit").Inc()
		} else {
			k.lookups.WithLabelValues("null_hit").Inc()
		}
		return found, nil
	}
	k.lookups.WithLabelValues("miss").Inc()
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, k.users+url.PathEscape(id), nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("X-Tenant", tenant)
	resp, err := k.client.Do(req)
	if err != nil {
		return false, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		k.cache.put(cacheKey, false)
		return false, nil
	default:
		return false, fmt.Errorf("the users service answered %d", resp.StatusCode)
	}
	service.Work(k.rounds, cacheKey) // verifying the fetched key
	k.cache.put(cacheKey, true)
	return true, nil
}
