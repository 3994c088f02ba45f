package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

// handler is a request handler that gets the request's tenant schema and reports errors by
// returning them: errNotFound becomes 404, errConflict 409, anything else 500.
type handler func(w http.ResponseWriter, r *http.Request, tenant string) error

var (
	errNotFound = errors.New("not found")
	errConflict = errors.New("conflict")
)

func (d *db) handle(reg *service.Registry, mux *http.ServeMux, pattern, route string, h handler) {
	mux.HandleFunc(pattern, reg.Instrument(route, func(w http.ResponseWriter, r *http.Request) {
		t, err := d.tenant(r)
		if err != nil {
			service.WriteError(w, http.StatusBadRequest, "%v", err)
			return
		}
		d.work(r.URL.Path)
		switch err := h(w, r, t); {
		case err == nil:
		case errors.Is(err, errNotFound), errors.Is(err, pgx.ErrNoRows):
			service.WriteError(w, http.StatusNotFound, "%v", err)
		case errors.Is(err, errConflict):
			service.WriteError(w, http.StatusConflict, "%v", err)
		default:
			service.WriteError(w, http.StatusInternalServerError, "%v", err)
		}
	}))
}

// count reads ?n= (default def, at most 1,000,000).
func count(r *http.Request, def int) (int, error) {
	v := r.URL.Query().Get("n")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1_000_000 {
		return 0, fmt.Errorf("n=%q: want 0..1000000", v)
	}
	return n, nil
}

// newInventory serves items. POST /items/seed?n= (re)creates n items ITEM-000001.. Available,
// the test data a workflow regenerates before each run.
func newInventory(mux *http.ServeMux, reg *service.Registry, d *db) {
	d.handle(reg, mux, "GET /items/{barcode}", "get_item", func(w http.ResponseWriter, r *http.Request, t string) error {
		var id int64
		var title, status string
		err := d.reads.QueryRow(r.Context(), "SELECT id, title, status FROM "+t+".items WHERE barcode = $1",
			r.PathValue("barcode")).Scan(&id, &title, &status)
		if err != nil {
			return err
		}
		service.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "barcode": r.PathValue("barcode"), "title": title, "status": status})
		return nil
	})
	d.handle(reg, mux, "PUT /items/{barcode}/status", "put_item_status", func(w http.ResponseWriter, r *http.Request, t string) error {
		var body struct {
			Status string `json:"status"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Status == "" {
			service.WriteError(w, http.StatusBadRequest, "want {\"status\": ...}")
			return nil
		}
		tag, err := d.writer.Exec(r.Context(), "UPDATE "+t+".items SET status = $2, updated_at = now() WHERE barcode = $1",
			r.PathValue("barcode"), body.Status)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errNotFound
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
	d.handle(reg, mux, "POST /items/seed", "seed_items", func(w http.ResponseWriter, r *http.Request, t string) error {
		n, err := count(r, 1000)
		if err != nil {
			service.WriteError(w, http.StatusBadRequest, "%v", err)
			return nil
		}
		_, err = d.writer.Exec(r.Context(), `
INSERT INTO `+t+`.items (barcode, title, status)
SELECT format('ITEM-%s', lpad(i::text, 6, '0')), format('Title %s', i), 'Available' FROM generate_series(1, $1) i
ON CONFLICT (barcode) DO UPDATE SET status = 'Available', updated_at = now()`, n)
		if err != nil {
			return err
		}
		if _, err := d.writer.Exec(r.Context(), "UPDATE "+t+".loans SET in_at = now() WHERE in_at IS NULL"); err != nil {
			return err
		}
		service.WriteJSON(w, http.StatusOK, map[string]any{keyTenant: t, "items": n})
		return nil
	})
	d.handle(reg, mux, "GET /items/stats", "item_stats", func(w http.ResponseWriter, r *http.Request, t string) error {
		return writeStatusCounts(w, r, d, t)
	})
}

func writeStatusCounts(w http.ResponseWriter, r *http.Request, d *db, t string) error {
	rows, err := d.reads.Query(r.Context(), "SELECT status, count(*) FROM "+t+".items GROUP BY status ORDER BY status")
	if err != nil {
		return err
	}
	out := map[string]int64{}
	for rows.Next() {
		var s string
		var n int64
		if err := rows.Scan(&s, &n); err != nil {
			return err
		}
		out[s] = n
	}
	if err := rows.Err(); err != nil {
		return err
	}
	service.WriteJSON(w, http.StatusOK, out)
	return nil
}

// newUsers serves users. POST /users/seed?n= (re)creates n active users USER-000001.. with the
// check-out permission.
func newUsers(mux *http.ServeMux, reg *service.Registry, d *db) {
	d.handle(reg, mux, "GET /users/{barcode}", "get_user", func(w http.ResponseWriter, r *http.Request, t string) error {
		var id int64
		var name string
		var active bool
		err := d.reads.QueryRow(r.Context(), "SELECT id, name, active FROM "+t+".users WHERE barcode = $1",
			r.PathValue("barcode")).Scan(&id, &name, &active)
		if err != nil {
			return err
		}
		service.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "barcode": r.PathValue("barcode"), keyName: name, "active": active})
		return nil
	})
	d.handle(reg, mux, "GET /users/{barcode}/blocks", "get_patron_blocks", patronBlocks(d))
	d.handle(reg, mux, "POST /users/seed", "seed_users", func(w http.ResponseWriter, r *http.Request, t string) error {
		n, err := count(r, 100)
		if err != nil {
			service.WriteError(w, http.StatusBadRequest, "%v", err)
			return nil
		}
		_, err = d.writer.Exec(r.Context(), `
INSERT INTO `+t+`.users (barcode, name, active)
SELECT format('USER-%s', lpad(i::text, 6, '0')), format('Patron %s', i), true FROM generate_series(1, $1) i
ON CONFLICT (barcode) DO UPDATE SET active = true`, n)
		if err != nil {
			return err
		}
		_, err = d.writer.Exec(r.Context(), `
INSERT INTO `+t+`.permissions (user_barcode, permission)
SELECT barcode, p FROM `+t+`.users, unnest(ARRAY['circulation.loans.post', 'inventory.items.get']) p
ON CONFLICT DO NOTHING`)
		if err != nil {
			return err
		}
		service.WriteJSON(w, http.StatusOK, map[string]any{keyTenant: t, "users": n})
		return nil
	})
}

// newPermissions serves a user's permissions.
func newPermissions(mux *http.ServeMux, reg *service.Registry, d *db) {
	d.handle(reg, mux, "GET /perms/{user}", "get_permissions", func(w http.ResponseWriter, r *http.Request, t string) error {
		rows, err := d.reads.Query(r.Context(), "SELECT permission FROM "+t+".permissions WHERE user_barcode = $1 ORDER BY 1", r.PathValue("user"))
		if err != nil {
			return err
		}
		perms, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if len(perms) == 0 {
			return errNotFound
		}
		service.WriteJSON(w, http.StatusOK, map[string]any{"user": r.PathValue("user"), "permissions": perms})
		return nil
	})
}

// newQuery is the query manager: list contents and item counts, all reads.
func newQuery(mux *http.ServeMux, reg *service.Registry, d *db) {
	d.handle(reg, mux, "GET /query/lists/{id}/contents", "list_contents", func(w http.ResponseWriter, r *http.Request, t string) error {
		rows, err := d.reads.Query(r.Context(), `
SELECT i.barcode FROM `+t+`.list_contents c JOIN `+t+`.items i ON i.id = c.item_id
WHERE c.list_id = $1 ORDER BY i.barcode LIMIT 100`, r.PathValue("id"))
		if err != nil {
			return err
		}
		items, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		service.WriteJSON(w, http.StatusOK, map[string]any{"list": r.PathValue("id"), "items": items})
		return nil
	})
	d.handle(reg, mux, "GET /query/items/stats", "query_item_stats", func(w http.ResponseWriter, r *http.Request, t string) error {
		return writeStatusCounts(w, r, d, t)
	})
}
