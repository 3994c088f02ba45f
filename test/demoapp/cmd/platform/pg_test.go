package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// startPostgres runs a real PostgreSQL (initdb and postgres from PATH) in a temporary
// directory for the test and returns its URL; the test is skipped where PostgreSQL is not
// installed. As root the server runs as the postgres (or nobody) user, which PostgreSQL needs.
func startPostgres(t *testing.T) string {
	t.Helper()
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		t.Skip("PostgreSQL is not installed (no initdb in PATH)")
	}
	postgres, err := exec.LookPath("postgres")
	if err != nil {
		t.Skip("PostgreSQL is not installed (no postgres in PATH)")
	}
	dir, err := os.MkdirTemp("", "platform-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	var as []string
	if os.Geteuid() == 0 {
		name := "postgres"
		u, err := user.Lookup(name)
		if err != nil {
			name = "nobody"
			if u, err = user.Lookup(name); err != nil {
				t.Skip("running as root without a postgres or nobody user to run PostgreSQL as")
			}
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		as = []string{"runuser", "-u", name, "--"}
	}
	command := func(args ...string) *exec.Cmd {
		args = append(as, args...)
		return exec.Command(args[0], args[1:]...)
	}
	data := filepath.Join(dir, "data")
	if out, err := command(initdb, "-D", data, "-U", "postgres", "--auth=trust", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	srv := command(postgres, "-D", data, "-p", strconv.Itoa(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(context.Background(), url)
		if err == nil {
			_ = conn.Close(context.Background())
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("PostgreSQL did not accept connections within 30 s: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
