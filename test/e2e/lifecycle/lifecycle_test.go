//go:build e2e

// Package lifecycle checks that the local cluster can be taken down and brought back: after
// `hack/local-cluster down` nothing of it is left on the machine (processes, bridge, iptables
// chains, mounts, cgroups, state), and `up` then builds a working cluster again. It runs after
// the other e2e packages (go test runs packages in path order with -p 1) and leaves the cluster
// up. Set E2E_SKIP_LIFECYCLE=1 to skip it.
package lifecycle

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfexp/perfexp/test/e2e/framework"
)

const (
	bridge   = "perfexp0"
	runState = "/run/perfexp-local"
)

// recordedProcess is one PID file written by hack/local-cluster: "PID STARTTIME".
type recordedProcess struct {
	name, pid, start string
}

func TestDownRemovesEverythingAndUpRestores(t *testing.T) {
	if os.Getenv("E2E_SKIP_LIFECYCLE") == "1" {
		t.Skip("E2E_SKIP_LIFECYCLE=1")
	}
	framework.RequireCluster(t)
	state := framework.StateDir()
	procs := recordedProcesses(t, state)
	if len(procs) < 9 {
		t.Fatalf("expected the PID files of every component under %s/pids, found %d", state, len(procs))
	}

	// nftables tables that existed before the cluster first came up (iptables-nft creates its
	// tables on first use); after down, no other table may remain.
	nftBefore, _ := os.ReadFile(filepath.Join(state, "nft-tables-before"))

	start := time.Now()
	localCluster(t, 3*time.Minute, "down")
	t.Logf("down took %s", time.Since(start).Round(time.Second))

	for _, p := range procs {
		if alive(p) {
			t.Errorf("%s (pid %s) still runs after down", p.name, p.pid)
		}
	}
	if out, _ := exec.Command("pgrep", "-a", "-f", state+"/|"+runState+"/").Output(); len(out) > 0 {
		t.Errorf("processes still reference the cluster's state:\n%s", out)
	}
	if err := exec.Command("ip", "link", "show", bridge).Run(); err == nil {
		t.Errorf("bridge %s still exists", bridge)
	}
	for _, save := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(save).Output()
		if err != nil {
			continue // no such table family on this machine
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, ":KUBE-") || strings.HasPrefix(line, ":CNI-") ||
				strings.Contains(line, "-j KUBE-") || strings.Contains(line, "-j CNI-") {
				t.Errorf("%s still holds %q", save, line)
			}
		}
	}
	if out, err := exec.Command("nft", "list", "tables").Output(); err == nil {
		for _, table := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if table != "" && !strings.Contains(string(nftBefore), table) {
				t.Errorf("nftables %q was created by the cluster and is still there", table)
			}
		}
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (strings.HasPrefix(f[4], state+"/") || strings.HasPrefix(f[4], runState+"/")) {
			t.Errorf("mount left behind: %s", f[4])
		}
	}
	for _, dir := range []string{state, runState, "/run/containerd/containerd.sock"} {
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s still exists", dir)
		}
	}
	if left, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods"); len(left) > 0 {
		t.Errorf("kubelet cgroups left behind: %v", left)
	}
	if t.Failed() {
		// Bring the cluster back anyway, so the machine is usable, but report the leftovers.
		localCluster(t, 10*time.Minute, "up")
		return
	}

	start = time.Now()
	localCluster(t, 10*time.Minute, "up")
	t.Logf("up after down took %s", time.Since(start).Round(time.Second))
	framework.RequireCluster(t)
	out := framework.Kubectl(t, "get", "nodes", "-o", `jsonpath={.items[0].status.conditions[?(@.type=="Ready")].status}`)
	if out != "True" {
		t.Fatalf("node not Ready after up: %q", out)
	}
	localCluster(t, time.Minute, "status")
}

func localCluster(t *testing.T, timeout time.Duration, verb string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(framework.RepoRoot(), "hack", "local-cluster"), verb)
	cmd.Dir = framework.RepoRoot()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hack/local-cluster %s: %v\n%s", verb, err, out)
	}
}

func recordedProcesses(t *testing.T, state string) []recordedProcess {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(state, "pids", "*.pid"))
	if err != nil {
		t.Fatal(err)
	}
	var procs []recordedProcess
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fields := strings.Fields(string(data))
		if len(fields) != 2 {
			t.Fatalf("%s: want \"PID STARTTIME\", got %q", f, data)
		}
		procs = append(procs, recordedProcess{
			name: strings.TrimSuffix(filepath.Base(f), ".pid"), pid: fields[0], start: fields[1],
		})
	}
	return procs
}

// alive reports whether the recorded process still runs: same PID and same start time (a
// reused PID belongs to another process).
func alive(p recordedProcess) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%s/stat", p.pid))
	if err != nil {
		return false
	}
	s := string(data)
	// Field 2 (the command) may contain spaces: count fields after its closing parenthesis.
	rest := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	return len(rest) > 19 && rest[19] == p.start
}
