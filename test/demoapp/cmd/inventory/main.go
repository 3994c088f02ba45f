// Command inventory is the demo's item store: circulation asks it to mark an item checked out
// or available. Items are created on first use, so a load test needs no data preparation.
//
// Environment:
//
//	PORT             listen port (8080)
//	WORK_ROUNDS      CPU work per request in SHA-256 rounds (10000, about 1 ms on one core)
//	RELEASE_CPU_WORK_PERCENT  extra CPU work in percent of WORK_ROUNDS, a slower release (0)
//	MEMORY_BALLAST_BYTES      bytes held resident for life, a steady footprint like a real service's (0)
//
// Built with the tag slow, every check-out and check-in waits releaseDelay more (release_slow.go):
// the deliberately slower release a performance bisect must find.
package main

import (
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

// Item is one copy of a book.
type Item struct {
	Barcode   string    `json:"barcode"`
	Status    string    `json:"status"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Item statuses, named after the library domain.
const (
	statusAvailable  = "Available"
	statusCheckedOut = "Checked out"
)

type store struct {
	mu    sync.Mutex
	items map[string]*Item
}

// transition moves an item from one status to another; a conflicting current status is
// reported with ok=false (an item cannot be checked out twice).
func (s *store) transition(barcode, from, to string) (Item, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, found := s.items[barcode]
	if !found {
		it = &Item{Barcode: barcode, Status: statusAvailable}
		s.items[barcode] = it
	}
	if it.Status != from {
		return *it, false
	}
	it.Status = to
	it.UpdatedAt = time.Now()
	return *it, true
}

// delayed waits releaseDelay (none unless built with the tag slow) before h answers.
func delayed(h http.HandlerFunc) http.HandlerFunc {
	if releaseDelay == 0 {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(releaseDelay)
		h(w, r)
	}
}

func main() {
	port := service.EnvString("PORT", "8080")
	rounds := service.WorkRounds(10000)
	st := &store{items: map[string]*Item{}}
	service.HoldBallast()
	reg := service.NewRegistry("inventory")

	handle := func(from, to string) http.HandlerFunc {
		return delayed(func(w http.ResponseWriter, r *http.Request) {
			barcode := r.PathValue("barcode")
			service.Work(rounds, barcode)
			it, ok := st.transition(barcode, from, to)
			if !ok {
				service.WriteError(w, http.StatusConflict, "item %s is %q", barcode, it.Status)
				return
			}
			service.WriteJSON(w, http.StatusOK, it)
		})
	}

	mux := http.NewServeMux()
	mux.HandleFunc("POST /inventory/items/{barcode}/check-out",
		reg.Instrument("check-out", handle(statusAvailable, statusCheckedOut)))
	mux.HandleFunc("POST /inventory/items/{barcode}/check-in",
		reg.Instrument("check-in", handle(statusCheckedOut, statusAvailable)))
	mux.HandleFunc("GET /inventory/items/{barcode}", reg.Instrument("get", func(w http.ResponseWriter, r *http.Request) {
		st.mu.Lock()
		it, ok := st.items[r.PathValue("barcode")]
		var cp Item
		if ok {
			cp = *it
		}
		st.mu.Unlock()
		if !ok {
			service.WriteError(w, http.StatusNotFound, "no item %s", r.PathValue("barcode"))
			return
		}
		service.WriteJSON(w, http.StatusOK, cp)
	}))

	if err := service.Serve(":"+port, mux, reg); err != nil {
		slog.Error("Server failed", "err", err)
		os.Exit(1)
	}
}
