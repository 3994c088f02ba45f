#!/usr/bin/env bash
# The performance gate of a pipeline: create an experiment, wait for its outcome, keep its
# reports, and fail the step when the outcome is one the pipeline does not accept.
#
# Both pipeline examples (github-actions.yaml, gitlab-ci.yml) and the composite action
# (.github/actions/perfexp-gate) run this script, so the steps they run are the ones
# cmd/kubectl-perfexp/ci_examples_test.go runs against an API server.
#
# A cancelled or timed-out job must not leave the environment patched and its queue held until
# the experiment's own timeout: on SIGTERM, SIGINT or SIGHUP, and when PERFEXP_TIMEOUT passes,
# the script aborts the experiment (the operator then restores the environment) and waits up to
# PERFEXP_ABORT_WAIT for it to end. `perfexp-gate.sh abort` does the same for the experiment a
# previous run of the script created (its name is in $PERFEXP_REPORTS/experiment-name), for a
# cleanup step that runs after the runner killed the gate.
#
# Needs kubectl and the kubectl-perfexp plugin on the PATH and a kubeconfig for the cluster.
# Settings (environment variables):
#   PERFEXP_EXPERIMENT  the experiment manifest; it has metadata.generateName, so each pipeline
#                       run creates a new experiment (one runs once)   (required)
#   PERFEXP_NAMESPACE   where it runs                                  (default: the context's)
#   PERFEXP_TIMEOUT     how long to wait for it                        (default: 30m)
#   PERFEXP_FAIL_ON     outcomes that fail the step                    (default: regressed,fail,invalid)
#   PERFEXP_REPORTS     where the JUnit, HTML and Markdown reports go  (default: perfexp-reports)
#   PERFEXP_ABORT_WAIT  how long to wait for the restore after an abort (default: 5m)
#   PERFEXP_ABORT_ON_TIMEOUT  abort when PERFEXP_TIMEOUT passes        (default: true)
# When GITHUB_STEP_SUMMARY names a file (GitHub Actions), the outcome and the Markdown report
# are appended to it.
# Exit code: kubectl perfexp watch's (docs/ci.md): 0 accepted, 3 Fail, 4 Invalid, 5 Regressed,
# 6 Inconclusive, 7 Failed, 8 Aborted, 9 timed out, 1 any other error; 128+N after signal N.
set -euo pipefail

timeout=${PERFEXP_TIMEOUT:-30m}
fail_on=${PERFEXP_FAIL_ON:-regressed,fail,invalid}
reports=${PERFEXP_REPORTS:-perfexp-reports}
abort_wait=${PERFEXP_ABORT_WAIT:-5m}
abort_on_timeout=${PERFEXP_ABORT_ON_TIMEOUT:-true}
ns_flag=()
if [[ -n "${PERFEXP_NAMESPACE:-}" ]]; then
  ns_flag=(-n "$PERFEXP_NAMESPACE")
fi
name=""
ended=false
watch_pid=""

# abort_and_wait aborts the experiment unless it ended, then follows it until it ends (the
# operator stops the load and restores the environment first) or abort_wait passes.
abort_and_wait() {
  local why=$1 code=0
  if [[ -z "$name" || "$ended" == true ]]; then
    return 0
  fi
  echo "perfexp: $why: aborting $name, waiting up to $abort_wait for the environment to be restored"
  if ! kubectl perfexp abort "$name" "${ns_flag[@]}"; then
    echo "perfexp: could not abort $name: the environment stays patched until its own timeout" >&2
    return 1
  fi
  kubectl perfexp watch "$name" "${ns_flag[@]}" --timeout "$abort_wait" >/dev/null || code=$?
  case $code in
    8) echo "perfexp: $name aborted, the environment restored" ;;
    0 | 7) echo "perfexp: $name had ended before the abort took effect" ;;
    9) echo "perfexp: $name still restoring after $abort_wait: see kubectl perfexp watch $name" >&2 ;;
    *) echo "perfexp: could not follow $name after the abort" >&2 ;;
  esac
  ended=true
}

# shellcheck disable=SC2317 # called by the traps below
on_signal() {
  local sig=$1 num=$2
  trap '' TERM INT HUP
  if [[ -n "$watch_pid" ]]; then
    kill "$watch_pid" 2>/dev/null || true
  fi
  abort_and_wait "SIG$sig" || true
  summary "cancelled (SIG$sig); the experiment was aborted"
  exit $((128 + num))
}

# summary appends the outcome and, when there is one, the Markdown report to the job summary.
summary() {
  [[ -n "${GITHUB_STEP_SUMMARY:-}" ]] || return 0
  {
    echo "### perfexp: ${name:-no experiment} $1"
    echo
    if [[ -s "$reports/perfexp-report.md" ]]; then
      cat "$reports/perfexp-report.md"
      echo
    fi
  } >>"$GITHUB_STEP_SUMMARY" || true
}

if [[ "${1:-}" == abort ]]; then
  # A cleanup step: the gate was killed before its trap could run (or ran out of its time).
  if [[ -s "$reports/experiment-name" ]]; then
    name=$(<"$reports/experiment-name")
    phase=$(kubectl get perfexperiments.perfexp.dev "$name" "${ns_flag[@]}" -o jsonpath='{.status.phase}' 2>/dev/null || true)
    case $phase in
      Succeeded | Failed | Aborted) echo "perfexp: $name already ended ($phase)" ;;
      *) abort_and_wait "cleanup after a cancelled gate" ;;
    esac
  fi
  exit 0
fi

: "${PERFEXP_EXPERIMENT:?set PERFEXP_EXPERIMENT to the experiment manifest}"
mkdir -p "$reports"
trap 'on_signal TERM 15' TERM
trap 'on_signal INT 2' INT
trap 'on_signal HUP 1' HUP

# kubectl create (not apply) honours generateName; -o name prints perfexperiment.perfexp.dev/NAME.
created=$(kubectl create -f "$PERFEXP_EXPERIMENT" "${ns_flag[@]}" -o name)
name=${created##*/}
echo "$name" > "$reports/experiment-name"
echo "created $created"

# In the background, so that a signal reaches the trap at once: bash runs a trap only after
# the foreground command ended, and wait returns as soon as a trapped signal arrives.
kubectl perfexp watch "$name" "${ns_flag[@]}" --timeout "$timeout" --fail-on "$fail_on" &
watch_pid=$!
code=0
wait "$watch_pid" || code=$?
watch_pid=""
if [[ $code -ne 9 ]]; then
  ended=true
elif [[ "$abort_on_timeout" == true ]]; then
  abort_and_wait "not ended after $timeout" || true
fi

# The reports, whatever the outcome; there are none when the experiment ended before its analysis.
kubectl perfexp report "$name" "${ns_flag[@]}" -o junit --file "$reports/perfexp-junit.xml" || true
kubectl perfexp report "$name" "${ns_flag[@]}" -o html --file "$reports/perfexp-report.html" || true
kubectl perfexp report "$name" "${ns_flag[@]}" -o md --file "$reports/perfexp-report.md" || true

case $code in
  0) outcome="accepted" ;;
  3) outcome="verdict Fail (an objective missed, a k6 threshold crossed, or a regression)" ;;
  4) outcome="verdict Invalid (the results cannot be trusted)" ;;
  5) outcome="Regressed against its baseline" ;;
  6) outcome="Inconclusive" ;;
  7) outcome="ended Failed" ;;
  8) outcome="was Aborted" ;;
  9) outcome="had not ended after $timeout" ;;
  *) outcome="could not be followed" ;;
esac
echo "perfexp: $name $outcome"
summary "$outcome (exit code $code)"
exit "$code"
