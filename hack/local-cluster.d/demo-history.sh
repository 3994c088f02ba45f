#!/usr/bin/env bash
# `make demo-history`: the local cluster, the operator and the demo system under test (as `make
# demo` brings them up, without its experiments), then eight check-in/check-out runs of one and
# the same experiment, one after another. Before the fifth, circulation is "upgraded" to a
# slower release (RELEASE_CPU_WORK_PERCENT: more CPU work per request), as a deployment pipeline
# would roll out a new image between two nightly runs. The eight experiments are then deleted,
# and `kubectl perfexp history` must still show all eight runs, with one change point at the
# fifth on p95 and avg. Every step that cannot run is named in the output; nothing is faked.
#
# The load is 20 check-out/check-in pairs per second, half the demo baseline's: circulation runs
# under a 250m CPU limit and its work is about 2 ms of CPU a request (WORK_ROUNDS), so at 40
# pairs (80 requests) per second it needs about 0.16 cores, and twice the work would pass the
# limit: latency would grow for as long as the run lasts and vary wildly from run to run. At 20
# pairs per second the slower release needs about 0.16 cores too, under the limit: latency
# moves to a new level and stays there, which is what a release that costs more CPU looks like.
# (Estimates, not measured here; DEMO_HISTORY_RATE and DEMO_HISTORY_SLOWDOWN tune them.)
#
# Environment: DEMO_NAMESPACE (default perfexp-demo), DEMO_HISTORY_SLOWDOWN (the release's
# extra CPU work in percent, default 100), DEMO_HISTORY_RATE (pairs per second, default 20),
# DEMO_HISTORY_RUN_TIMEOUT (seconds to wait for one run, default 600), DEMO_HISTORY_KEEP=1
# (keep the records of an earlier demo: by default its history is deleted first, so the eight
# runs are the whole history).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=hack/local-cluster.d/lib.sh
source "${ROOT}/hack/local-cluster.d/lib.sh"
cd "${ROOT}"

NS="${DEMO_NAMESPACE:-perfexp-demo}"
SLOWDOWN="${DEMO_HISTORY_SLOWDOWN:-100}"
RATE="${DEMO_HISTORY_RATE:-20}"
RUN_TIMEOUT="${DEMO_HISTORY_RUN_TIMEOUT:-600}"
RUNS=8
SLOWER_FROM=5
PREFIX=demo-history
OPERATOR_NS=perfexp-system
OPERATOR_DEPLOY=perfexp-manager

step() { printf '\n==> %s\n' "$*" >&2; }

t0=${SECONDS}
step "cluster, operator and demo system (hack/local-cluster.d/demo.sh, SKIP_EXPERIMENTS=1)"
SKIP_EXPERIMENTS=1 DEMO_NAMESPACE="${NS}" hack/local-cluster.d/demo.sh

if ! kc get crd perfhistories.perfexp.dev >/dev/null 2>&1; then
  echo "The PerfHistory CRD is not installed (config/crd did not apply); there is no history to show." >&2
  exit 1
fi
if ! kc -n "${OPERATOR_NS}" rollout status "deploy/${OPERATOR_DEPLOY}" --timeout=10s >/dev/null 2>&1; then
  echo "The operator is not running (see the summary above); the runs would wait forever." >&2
  exit 1
fi

plugin=()
# A plugin built before the history verb existed would not do: try it first.
if "${LOCALBIN:-${ROOT}/bin}/kubectl-perfexp" history --help >/dev/null 2>&1; then
  plugin=("${LOCALBIN:-${ROOT}/bin}/kubectl-perfexp")
elif command -v go >/dev/null 2>&1; then
  plugin=(go run ./cmd/kubectl-perfexp)
else
  echo "Neither bin/kubectl-perfexp (make build) nor Go to build it: the history cannot be printed." >&2
  exit 1
fi
perfexp() { "${plugin[@]}" --kubeconfig "${KUBECONFIG_PATH}" -n "${NS}" "$@"; }

# release N puts circulation on the baseline release (0) or the slower one, and waits for it.
release() {
  if [ "$1" = 0 ]; then
    kc -n "${NS}" set env deploy/circulation RELEASE_CPU_WORK_PERCENT-
  else
    kc -n "${NS}" set env deploy/circulation "RELEASE_CPU_WORK_PERCENT=$1"
  fi
  kc -n "${NS}" rollout status deploy/circulation --timeout=180s
}

step "the check-in/check-out script (ConfigMap checkinout-script in ${NS}) and the baseline release"
kc -n "${NS}" create configmap checkinout-script --from-file=script.js=scenarios/demo/checkinout.js \
  --dry-run=client -o yaml | kc apply -f -
release 0

step "earlier runs of this demo"
kc -n "${NS}" delete perfexperiments -l "perfexp.dev/demo=history" --ignore-not-found --timeout=600s
if [ "${DEMO_HISTORY_KEEP:-}" != 1 ]; then
  # The history of these runs is the one holding a record of ${PREFIX}-1.
  for h in $(kc -n "${NS}" get perfhistories \
    -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.records[*].experiment}{"\n"}{end}' |
    awk -v run="${PREFIX}-1" '{ for (i = 2; i <= NF; i++) if ($i == run) print $1 }'); do
    kc -n "${NS}" delete perfhistory "${h}"
  done
fi

# experiment NAME prints one run: the demo baseline's load at RATE check-out/check-in pairs per
# second, shortened to 60 s (plus a 10 s warm-up) so eight runs take about 20 minutes.
experiment() {
  cat <<YAML
apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata:
  name: $1
  namespace: ${NS}
  labels:
    perfexp.dev/demo: history
spec:
  load:
    warmUp:
      vus: 2
      duration: 10s
    scenarios:
    - name: checkinout
      script:
        configMap:
          name: checkinout-script
      arrivalRate:
        rate: ${RATE}
        timeUnit: 1s
        duration: 60s
        preAllocatedVUs: 10
        maxVUs: 40
      env:
      - name: BASE_URL
        value: http://circulation:8080
      resources:
        requests: {cpu: 100m, memory: 64Mi}
        limits: {memory: 256Mi}
  timeouts:
    rollout: 3m
    overall: 10m
YAML
}

failed=()
for i in $(seq 1 "${RUNS}"); do
  name="${PREFIX}-${i}"
  if [ "${i}" = "${SLOWER_FROM}" ]; then
    step "the slower release: RELEASE_CPU_WORK_PERCENT=${SLOWDOWN} on circulation"
    release "${SLOWDOWN}"
  fi
  step "run ${i} of ${RUNS}: ${name}"
  experiment "${name}" | kc apply -f -
  deadline=$((SECONDS + RUN_TIMEOUT))
  phase=""
  while :; do
    phase="$(kc -n "${NS}" get perfexperiment "${name}" -o jsonpath='{.status.phase}' 2>/dev/null || true)"
    case "${phase}" in
      Succeeded | Failed | Aborted) break ;;
    esac
    if [ "${SECONDS}" -ge "${deadline}" ]; then
      echo "${name} had not ended after ${RUN_TIMEOUT}s (phase ${phase:-none})" >&2
      break
    fi
    sleep 5
  done
  kc -n "${NS}" get perfexperiment "${name}" -o wide || true
  [ "${phase}" = Succeeded ] || failed+=("${name}: ${phase:-no phase}")
done

step "back to the baseline release"
release 0

step "deleting the ${RUNS} experiments: the history must outlive them"
kc -n "${NS}" delete perfexperiments -l "perfexp.dev/demo=history" --timeout=600s
kc -n "${NS}" get perfexperiments -l "perfexp.dev/demo=history" 2>&1 || true

step "the histories of ${NS} (kubectl perfexp history)"
perfexp history || true

step "the p95 trend (kubectl perfexp history --experiment ${PREFIX}-${RUNS})"
out="$(perfexp history --experiment "${PREFIX}-${RUNS}" 2>&1 || true)"
printf '%s\n' "${out}"
step "the average (kubectl perfexp history --experiment ${PREFIX}-${RUNS} --metric avg)"
perfexp history --experiment "${PREFIX}-${RUNS}" --metric avg || true

step "summary"
records="$(printf '%s\n' "${out}" | sed -n 's/^History [^ ]*: \([0-9]*\) runs.*/\1/p')"
# The change list's lines: "<run> <series> <before> <after> <change> <p> <verdict>".
changes="$(printf '%s\n' "${out}" | awk '/^Change points/ { on = 1; next } on && $1 ~ /^'"${PREFIX}"'-/ { print $1, $2 }')"
echo "runs that failed: ${#failed[@]}${failed[*]:+ (${failed[*]})}"
echo "records in the history after deleting the experiments: ${records:-none}"
echo "change points of the scenario's p95 and avg:"
printf '%s\n' "${changes}" | grep -E ' checkinout/(p95|avg)$' || echo "  none"
echo "total $((SECONDS - t0))s"
want="$(printf '%s\n%s\n' "${PREFIX}-${SLOWER_FROM} checkinout/avg" "${PREFIX}-${SLOWER_FROM} checkinout/p95")"
got="$(printf '%s\n' "${changes}" | grep -E ' checkinout/(p95|avg)$' | sort || true)"
if [ "${#failed[@]}" = 0 ] && [ "${records}" = "${RUNS}" ] && [ "${got}" = "${want}" ]; then
  echo "as expected: ${RUNS} runs kept, one change point at run ${SLOWER_FROM} on p95 and avg, none elsewhere"
else
  echo "not as expected: want ${RUNS} records and exactly: ${want//$'\n'/, }" >&2
  exit 1
fi
