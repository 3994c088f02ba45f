package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

// lists refreshes lists of items. Settings:
//
//	LIST_REFRESH_LOCK_TIMEOUT_MS  how long a refresh waits for another refresh of the same
//	                              tenant before it fails (1000)
//	LIST_REFRESH_COST             md5 rounds per item in the refresh query: the database's
//	                              CPU per refresh (20000)
//	LIST_REFRESH_RESET_ON_FAILURE true: a failed refresh clears its isRefreshing mark (false,
//	                              the behaviour the studies met: the mark stays set)
type lists struct {
	d            *db
	lockTimeout  int
	cost         int
	resetOnError bool
	duration     *prometheus.HistogramVec
}

func newLists(mux *http.ServeMux, reg *service.Registry, d *db) {
	l := &lists{
		d:            d,
		lockTimeout:  service.EnvInt("LIST_REFRESH_LOCK_TIMEOUT_MS", 1000),
		cost:         service.EnvInt("LIST_REFRESH_COST", 20000),
		resetOnError: service.EnvString("LIST_REFRESH_RESET_ON_FAILURE", "false") == "true",
		duration: promauto.With(reg).NewHistogramVec(prometheus.HistogramOpts{
			Name:                        "platform_list_refresh_duration_seconds",
			Help:                        "Time of a whole list refresh, by tenant and outcome (ok, failed, busy).",
			Buckets:                     prometheus.ExponentialBuckets(0.01, 2, 14),
			NativeHistogramBucketFactor: 1.1,
		}, []string{keyTenant, "outcome"}),
	}
	d.handle(reg, mux, "POST /lists/seed", "seed_lists", l.seed)
	d.handle(reg, mux, "POST /lists/{name}/refresh", "refresh_list", l.refresh)
	d.handle(reg, mux, "GET /lists/{name}", "get_list", l.get)
	d.handle(reg, mux, "POST /lists/reset-stuck", "reset_stuck_lists", l.resetStuck)
}

// seed (re)creates lists list-1..list-n, not refreshing.
func (l *lists) seed(w http.ResponseWriter, r *http.Request, t string) error {
	n, err := count(r, 10)
	if err != nil {
		service.WriteError(w, http.StatusBadRequest, "%v", err)
		return nil
	}
	_, err = l.d.writer.Exec(r.Context(), `
INSERT INTO `+t+`.lists (name, status_filter)
SELECT format('list-%s', i), 'Available' FROM generate_series(1, $1) i
ON CONFLICT (name) DO UPDATE SET is_refreshing = false, status_filter = EXCLUDED.status_filter`, n)
	if err != nil {
		return err
	}
	service.WriteJSON(w, http.StatusOK, map[string]any{keyTenant: t, "lists": n})
	return nil
}

func (l *lists) get(w http.ResponseWriter, r *http.Request, t string) error {
	var refreshing bool
	var refreshed *time.Time
	var n int64
	err := l.d.reads.QueryRow(r.Context(), "SELECT is_refreshing, refreshed_at, record_count FROM "+t+".lists WHERE name = $1",
		r.PathValue("name")).Scan(&refreshing, &refreshed, &n)
	if err != nil {
		return err
	}
	service.WriteJSON(w, http.StatusOK, map[string]any{keyName: r.PathValue("name"), "isRefreshing": refreshing, "refreshedAt": refreshed, "recordCount": n})
	return nil
}

// resetStuck clears every isRefreshing mark: the fix by hand the studies applied afterwards.
func (l *lists) resetStuck(w http.ResponseWriter, r *http.Request, t string) error {
	tag, err := l.d.writer.Exec(r.Context(), "UPDATE "+t+".lists SET is_refreshing = false WHERE is_refreshing")
	if err != nil {
		return err
	}
	service.WriteJSON(w, http.StatusOK, map[string]any{keyTenant: t, "reset": tag.RowsAffected()})
	return nil
}

// refresh marks the list, rebuilds its contents and clears the mark. The rebuild of a tenant's
// lists is serialised by a table lock; a refresh that waits longer than the lock timeout fails
// and, unless LIST_REFRESH_RESET_ON_FAILURE, leaves the list marked isRefreshing for good.
func (l *lists) refresh(w http.ResponseWriter, r *http.Request, t string) error {
	start := time.Now()
	ctx := r.Context()
	var id int64
	var filter string
	err := l.d.writer.QueryRow(ctx, "UPDATE "+t+".lists SET is_refreshing = true WHERE name = $1 AND NOT is_refreshing RETURNING id, status_filter",
		r.PathValue("name")).Scan(&id, &filter)
	if errors.Is(err, pgx.ErrNoRows) {
		l.duration.WithLabelValues(t, "busy").Observe(time.Since(start).Seconds())
		return fmt.Errorf("list %s is already refreshing or does not exist: %w", r.PathValue("name"), errConflict)
	}
	if err != nil {
		return err
	}
	n, err := l.rebuild(ctx, t, id, filter)
	if err != nil {
		if l.resetOnError {
			_, _ = l.d.writer.Exec(context.WithoutCancel(ctx), "UPDATE "+t+".lists SET is_refreshing = false WHERE id = $1", id)
		}
		l.duration.WithLabelValues(t, "failed").Observe(time.Since(start).Seconds())
		return fmt.Errorf("refreshing list %s: %w", r.PathValue("name"), err)
	}
	l.duration.WithLabelValues(t, "ok").Observe(time.Since(start).Seconds())
	service.WriteJSON(w, http.StatusOK, map[string]any{keyName: r.PathValue("name"), "recordCount": n, "seconds": time.Since(start).Seconds()})
	return nil
}

// matchQuery selects the items of a list; the md5 rounds are the query's CPU cost.
const matchQuery = "SELECT id FROM %s.items WHERE status = $1 AND length(md5(repeat(title, $2))) = 32"

func (l *lists) rebuild(ctx context.Context, t string, id int64, filter string) (int64, error) {
	// With the split on, the selection is read from the replica and only its result is written.
	var ids []int64
	if l.d.reader != nil {
		rows, err := l.d.reader.Query(ctx, fmt.Sprintf(matchQuery, t), filter, l.cost)
		if err != nil {
			return 0, err
		}
		if ids, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
			return 0, err
		}
	}
	tx, err := l.d.writer.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL lock_timeout = %d", l.lockTimeout)); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE "+t+".list_contents IN SHARE ROW EXCLUSIVE MODE"); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, "DELETE FROM "+t+".list_contents WHERE list_id = $1", id); err != nil {
		return 0, err
	}
	var tag interface{ RowsAffected() int64 }
	if l.d.reader != nil {
		tag, err = tx.Exec(ctx, "INSERT INTO "+t+".list_contents (list_id, item_id) SELECT $1, unnest($2::bigint[])", id, ids)
	} else {
		tag, err = tx.Exec(ctx, "INSERT INTO "+t+".list_contents (list_id, item_id) SELECT $3, id FROM ("+
			fmt.Sprintf(matchQuery, t)+") m", filter, l.cost, id)
	}
	if err != nil {
		return 0, err
	}
	n := tag.RowsAffected()
	if _, err := tx.Exec(ctx, "UPDATE "+t+".lists SET is_refreshing = false, refreshed_at = now(), record_count = $2 WHERE id = $1", id, n); err != nil {
		return 0, err
	}
	return n, tx.Commit(ctx)
}
