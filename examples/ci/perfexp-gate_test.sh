#!/usr/bin/env bash
# Tests of perfexp-gate.sh's cancellation with a fake kubectl (testdata/fake-kubectl) that
# records its calls: no cluster, a few seconds. Run it from anywhere:
#   examples/ci/perfexp-gate_test.sh
# cmd/kubectl-perfexp/ci_examples_test.go runs it too (TestGateScriptCancels).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# setup makes a work directory with the fake as kubectl on PATH; prints its path.
setup() {
  local dir
  dir=$(mktemp -d)
  mkdir -p "$dir/bin"
  cp "$here/testdata/fake-kubectl" "$dir/bin/kubectl"
  : >"$dir/calls"
  echo "$dir"
}

# run_gate replaces the shell it runs in with the gate (so a background run's pid is the
# gate's own): call it in a subshell, ( run_gate ... ) or run_gate ... &.
run_gate() { # dir, then extra environment assignments
  local dir=$1
  shift
  exec env PATH="$dir/bin:$PATH" FAKE_CALLS="$dir/calls" PERFEXP_EXPERIMENT=experiment.yaml \
    PERFEXP_NAMESPACE=perfexp-demo PERFEXP_REPORTS="$dir/reports" PERFEXP_ABORT_WAIT=7s "$@" \
    "$here/perfexp-gate.sh" >"$dir/out" 2>&1
}

# The first line of calls that matches a pattern, as its number (0: none).
line_of() { grep -n -m1 -e "$2" "$1/calls" | cut -d: -f1 || true; }

test_sigterm_mid_wait() {
  local dir code=0 waited=0
  dir=$(setup)
  run_gate "$dir" GITHUB_STEP_SUMMARY="$dir/summary" & local pid=$!
  # Until the gate is waiting on watch.
  until grep -q -- '--fail-on' "$dir/calls" 2>/dev/null; do
    sleep 0.1
    waited=$((waited + 1))
    [[ $waited -lt 100 ]] || { fail "sigterm: the gate never started watching"; kill "$pid"; return; }
  done
  local sent=$SECONDS
  kill -TERM "$pid"
  wait "$pid" || code=$?
  [[ $code -eq 143 ]] || fail "sigterm: exit $code, want 143 (128+SIGTERM)"
  local watch abort restored
  watch=$(line_of "$dir" "perfexp watch ci-gate-x7k2p -n perfexp-demo --timeout 30m")
  abort=$(line_of "$dir" "perfexp abort ci-gate-x7k2p -n perfexp-demo")
  restored=$(line_of "$dir" "^restored")
  [[ -n "$abort" && "$abort" -gt "${watch:-0}" ]] || fail "sigterm: no abort after the watch:$(cat "$dir/calls")"
  grep -q -- "perfexp watch ci-gate-x7k2p -n perfexp-demo --timeout 7s" "$dir/calls" ||
    fail "sigterm: the restore was not waited for within PERFEXP_ABORT_WAIT:$(cat "$dir/calls")"
  [[ -n "$restored" ]] || fail "sigterm: the gate exited before the restore ended"
  grep -q "aborted, the environment restored" "$dir/out" || fail "sigterm: output: $(cat "$dir/out")"
  [[ $((SECONDS - sent)) -lt 7 ]] || fail "sigterm: took $((SECONDS - sent)) s after the signal"
  grep -q "cancelled (SIGTERM)" "$dir/summary" || fail "sigterm: the job summary says: $(cat "$dir/summary")"
  rm -rf "$dir"
}

test_timeout_aborts() {
  local dir code=0
  dir=$(setup)
  (run_gate "$dir" FAKE_WATCH=9 PERFEXP_TIMEOUT=2s) || code=$?
  [[ $code -eq 9 ]] || fail "timeout: exit $code, want 9"
  grep -q "perfexp abort ci-gate-x7k2p" "$dir/calls" || fail "timeout: no abort:$(cat "$dir/calls")"
  grep -q "^restored" "$dir/calls" || fail "timeout: the restore was not waited for"
  rm -rf "$dir"
}

test_ended_no_abort() {
  local dir code=0
  dir=$(setup)
  (run_gate "$dir" FAKE_WATCH=0 GITHUB_STEP_SUMMARY="$dir/summary") || code=$?
  [[ $code -eq 0 ]] || fail "ended: exit $code, want 0: $(cat "$dir/out")"
  if grep -q "perfexp abort" "$dir/calls"; then fail "ended: an experiment that ended was aborted"; fi
  if ! { grep -q "accepted (exit code 0)" "$dir/summary" && grep -q "| p95 | 8.1 ms" "$dir/summary"; }; then
    fail "ended: the job summary lacks the outcome or the report's table: $(cat "$dir/summary")"
  fi
  rm -rf "$dir"
}

test_cleanup_step() {
  local dir code=0
  dir=$(setup)
  mkdir -p "$dir/reports" && echo ci-gate-x7k2p >"$dir/reports/experiment-name"
  env PATH="$dir/bin:$PATH" FAKE_CALLS="$dir/calls" PERFEXP_NAMESPACE=perfexp-demo PERFEXP_REPORTS="$dir/reports" \
    PERFEXP_ABORT_WAIT=7s "$here/perfexp-gate.sh" abort >"$dir/out" 2>&1 || code=$?
  [[ $code -eq 0 ]] || fail "cleanup: exit $code"
  if ! { grep -q "perfexp abort ci-gate-x7k2p" "$dir/calls" && grep -q "^restored" "$dir/calls"; }; then
    fail "cleanup: a running experiment was not aborted and waited for:$(cat "$dir/calls")"
  fi
  : >"$dir/calls"
  env PATH="$dir/bin:$PATH" FAKE_CALLS="$dir/calls" PERFEXP_REPORTS="$dir/reports" "$here/perfexp-gate.sh" abort >"$dir/out" 2>&1
  if grep -q "perfexp abort" "$dir/calls"; then fail "cleanup: an aborted experiment was aborted again"; fi
  rm -rf "$dir"
}

test_sigterm_mid_wait
test_timeout_aborts
test_ended_no_abort
test_cleanup_step
if [[ $failures -ne 0 ]]; then
  echo "perfexp-gate_test.sh: $failures failed" >&2
  exit 1
fi
echo "perfexp-gate_test.sh: ok"
