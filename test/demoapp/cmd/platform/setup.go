package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/perfexp/perfexp/test/demoapp/internal/service"
)

// runSetup is SERVICE=setup: a one-shot task for the studies' setup and teardown Jobs. It calls
// the gateway for every tenant and exits. Settings:
//
//	GATEWAY_URL   http://gateway:8080
//	TENANTS       diku,east,west
//	SETUP_TASKS   comma-separated, in order (seed):
//	                seed         regenerate test data: SEED_ITEMS items (1000), SEED_USERS users
//	                             (100), SEED_LISTS lists (10); every open loan is closed, then the closed
//	                             loans and the holds are deleted
//	                reset-stuck  clear every isRefreshing mark (the fix by hand after a failed refresh)
//	                reset-import delete the imported records
func runSetup(ctx context.Context) error {
	gw := service.EnvString("GATEWAY_URL", "http://gateway:8080")
	tenants := strings.Split(service.EnvString("TENANTS", "diku,east,west"), ",")
	calls := map[string][]string{
		"seed": {
			fmt.Sprintf("/items/seed?n=%d", service.EnvInt("SEED_ITEMS", 1000)),
			fmt.Sprintf("/users/seed?n=%d", service.EnvInt("SEED_USERS", 100)),
			fmt.Sprintf("/lists/seed?n=%d", service.EnvInt("SEED_LISTS", 10)),
			"/patron/reset",
		},
		"reset-stuck":  {"/lists/reset-stuck"},
		"reset-import": {"/import/reset"},
	}
	client := &http.Client{Timeout: 120 * time.Second}
	for _, task := range strings.Split(service.EnvString("SETUP_TASKS", "seed"), ",") {
		paths, ok := calls[task]
		if !ok {
			return fmt.Errorf("unknown setup task %q", task)
		}
		for _, t := range tenants {
			for _, p := range paths {
				if err := post(ctx, client, gw+p, t); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// post retries for up to two minutes: the Job may start before the services are ready.
func post(ctx context.Context, client *http.Client, url, tenant string) error {
	var last error
	for range 60 {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
		if err != nil {
			return err
		}
		req.Header.Set("X-Tenant", tenant)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				slog.Info("Setup", "tenant", tenant, "call", url, "answer", strings.TrimSpace(string(body)))
				return nil
			}
			err = fmt.Errorf("%s answered %d: %s", url, resp.StatusCode, body)
		}
		last = err
		time.Sleep(2 * time.Second)
	}
	return last
}
