package main

import (
	"fmt"
	"net/http"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

// The patron requests the edge API serves (through the gateway's /patron/ route), and the
// automated patron blocks every check-out asks for.
//
//	GET  /patron/account/{id}                          the patron, its open loans and holds
//	POST /patron/account/{id}/instance/{instance}/hold  places a hold on an item for the patron
//	POST /patron/reset                                  deletes the holds and the closed loans
//	                                                    (a setup step: every run starts alike)
func (c *circulation) patronRoutes(mux *http.ServeMux, reg *service.Registry) {
	c.d.handle(reg, mux, "GET /patron/account/{id}", "get_patron_account", c.account)
	c.d.handle(reg, mux, "POST /patron/account/{id}/instance/{instance}/hold", "post_patron_hold", c.hold)
	c.d.handle(reg, mux, "POST /patron/reset", "reset_patrons", c.resetPatrons)
}

func (c *circulation) patron(r *http.Request, t, id string) error {
	code, err := c.call(r.Context(), http.MethodGet, c.users+"/users/"+id, t, nil, nil)
	if err != nil {
		return err
	}
	if code == http.StatusNotFound {
		return fmt.Errorf("patron %s: %w", id, errNotFound)
	}
	if code != http.StatusOK {
		return fmt.Errorf("the users service answered %d", code)
	}
	return nil
}

func (c *circulation) account(w http.ResponseWriter, r *http.Request, t string) error {
	id := r.PathValue("id")
	if err := c.patron(r, t, id); err != nil {
		return err
	}
	var loans, holds int64
	err := c.d.reads.QueryRow(r.Context(), "SELECT (SELECT count(*) FROM "+t+".loans WHERE user_barcode = $1 AND in_at IS NULL), "+
		"(SELECT count(*) FROM "+t+".holds WHERE user_barcode = $1)", id).Scan(&loans, &holds)
	if err != nil {
		return err
	}
	service.WriteJSON(w, http.StatusOK, map[string]any{keyPatron: id, "loans": loans, "holds": holds})
	return nil
}

func (c *circulation) hold(w http.ResponseWriter, r *http.Request, t string) error {
	id, item := r.PathValue("id"), r.PathValue("instance")
	if err := c.patron(r, t, id); err != nil {
		return err
	}
	code, err := c.call(r.Context(), http.MethodGet, c.inventory+"/items/"+item, t, nil, nil)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("item %s: inventory answered %d: %w", item, code, errNotFound)
	}
	var holdID int64
	if err := c.d.writer.QueryRow(r.Context(), "INSERT INTO "+t+".holds (user_barcode, item_barcode) VALUES ($1, $2) RETURNING id",
		id, item).Scan(&holdID); err != nil {
		return err
	}
	service.WriteJSON(w, http.StatusCreated, map[string]any{"holdId": holdID, keyPatron: id, keyItemBarcode: item})
	return nil
}

func (c *circulation) resetPatrons(w http.ResponseWriter, r *http.Request, t string) error {
	holds, err := c.d.writer.Exec(r.Context(), "DELETE FROM "+t+".holds")
	if err != nil {
		return err
	}
	loans, err := c.d.writer.Exec(r.Context(), "DELETE FROM "+t+".loans WHERE in_at IS NOT NULL")
	if err != nil {
		return err
	}
	service.WriteJSON(w, http.StatusOK, map[string]any{keyTenant: t, "holds": holds.RowsAffected(), "closedLoans": loans.RowsAffected()})
	return nil
}

// checkBlocks asks the users service for the patron's automated blocks; a blocked patron may
// not check out.
func (c *circulation) checkBlocks(r *http.Request, t, user string) error {
	var blocks struct {
		Blocked bool `json:"blocked"`
	}
	code, err := c.call(r.Context(), http.MethodGet, c.users+"/users/"+user+"/blocks", t, nil, &blocks)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("automated patron blocks answered %d", code)
	}
	if blocks.Blocked {
		return fmt.Errorf("patron %s is blocked: %w", user, errConflict)
	}
	return nil
}

// patronBlocks serves GET /users/{barcode}/blocks on the users service. Settings:
//
//	RELEASE                    r1 (default): the blocks count the patron's open loans through
//	                           the partial index loans_user_open; r2: they count the patron's
//	                           whole loan history, a scan of the loans table that grows as a
//	                           run adds loans, and spend PATRON_BLOCKS_WORK_ROUNDS more CPU
//	                           (the release that made automated patron blocks slower)
//	PATRON_BLOCKS_WORK_ROUNDS  (r2 only) SHA-256 rounds per request (8000)
//	PATRON_MAX_LOANS           loans above which a patron is blocked (1000000)
func patronBlocks(d *db) handler {
	release := service.EnvString("RELEASE", "r1")
	rounds := service.EnvInt("PATRON_BLOCKS_WORK_ROUNDS", 8000)
	maxLoans := int64(service.EnvInt("PATRON_MAX_LOANS", 1000000))
	return func(w http.ResponseWriter, r *http.Request, t string) error {
		user := r.PathValue("barcode")
		q := "SELECT count(*) FROM " + t + ".loans WHERE user_barcode = $1 AND in_at IS NULL"
		if release == "r2" {
			service.Work(rounds, user)
			q = "SELECT count(*) FILTER (WHERE in_at IS NULL) FROM " + t + ".loans WHERE user_barcode = $1"
		}
		var open int64
		if err := d.reads.QueryRow(r.Context(), q, user).Scan(&open); err != nil {
			return err
		}
		service.WriteJSON(w, http.StatusOK, map[string]any{keyPatron: user, "openLoans": open, "blocked": open > maxLoans, "release": release})
		return nil
	}
}
