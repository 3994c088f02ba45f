package main

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

// defaultRoutes maps a path's first segment to the service that serves it.
const defaultRoutes = "circulation=http://circulation:8080,items=http://inventory:8080,users=http://users:8080," +
	"perms=http://permissions:8080,lists=http://lists:8080,query=http://query:8080,import=http://import:8080"

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
// EDGE_IDLE_TIMEOUT_MS for idle connections (90000): the settings a parameter sweep turns.
func newEdge(mux *http.ServeMux, reg *service.Registry) {
	pool := service.EnvInt("EDGE_POOL_SIZE", 8)
	transport := &http.Transport{
		MaxConnsPerHost: pool, MaxIdleConnsPerHost: pool,
		IdleConnTimeout:       time.Duration(service.EnvInt("EDGE_IDLE_TIMEOUT_MS", 90000)) * time.Millisecond,
		ResponseHeaderTimeout: time.Duration(service.EnvInt("EDGE_TIMEOUT_MS", 5000)) * time.Millisecond,
	}
	p := proxyTo(service.EnvString("UPSTREAM_URL", "http://gateway:8080"), transport)
	rounds := service.WorkRounds(2000)
	mux.HandleFunc("/edge/", reg.Instrument("edge", func(w http.ResponseWriter, r *http.Request) {
		service.Work(rounds, r.URL.Path)
		r.URL.Path = strings.TrimPrefix(r.URL.Path, "/edge")
		p.ServeHTTP(w, r)
	}))
}
