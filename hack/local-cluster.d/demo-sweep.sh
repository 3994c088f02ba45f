#!/usr/bin/env bash
# `make demo-sweep`: the local cluster, the operator and the demo system under test (as `make
# demo` brings them up, without its experiments), then the demo PerfSweep (scenarios/demo-sweep):
# one `kubectl apply`, eight runs in one queue, and the sweep table at the end. Every step that
# cannot run is named in the output; nothing is faked.
#
# Environment: DEMO_SWEEP_TIMEOUT (seconds to wait for the sweep, default 1500),
# DEMO_NAMESPACE (default perfexp-demo), DEMO_SWEEP_RESET=1 (delete an earlier run of the sweep
# first, so it runs again; by default an existing sweep is left as it is and only reported),
# DEMO_SWEEP_DIR and DEMO_SWEEP_NAME (another sweep: `make demo-aa` runs scenarios/demo-aa),
# DEMO_SWEEP_BURN_REPEATS (e.g. "2 4": a noisy neighbour, one k6 pod spinning on up to one core
# in namespace perfexp-burner, runs while a run of those repeats is in the environment and is
# stopped otherwise; the log says when it was on).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=hack/local-cluster.d/lib.sh
source "${ROOT}/hack/local-cluster.d/lib.sh"
cd "${ROOT}"

NS="${DEMO_NAMESPACE:-perfexp-demo}"
TIMEOUT="${DEMO_SWEEP_TIMEOUT:-1500}"
SWEEP="${DEMO_SWEEP_NAME:-demo-pool}"
SWEEP_DIR="${DEMO_SWEEP_DIR:-scenarios/demo-sweep}"
OPERATOR_NS=perfexp-system
OPERATOR_DEPLOY=perfexp-manager

step() { printf '\n==> %s\n' "$*" >&2; }

t0=${SECONDS}
step "cluster, operator and demo system (hack/local-cluster.d/demo.sh, SKIP_EXPERIMENTS=1)"
SKIP_EXPERIMENTS=1 DEMO_NAMESPACE="${NS}" hack/local-cluster.d/demo.sh

if ! kc get crd perfsweeps.perfexp.dev >/dev/null 2>&1; then
  echo "The PerfSweep CRD is not installed (config/crd did not apply); the sweep cannot run." >&2
  exit 1
fi
if ! kc -n "${OPERATOR_NS}" rollout status "deploy/${OPERATOR_DEPLOY}" --timeout=10s >/dev/null 2>&1; then
  echo "The operator is not running (see the summary above); the sweep would wait forever." >&2
  exit 1
fi

step "the check-in/check-out script (ConfigMap checkinout-script in ${NS})"
kc -n "${NS}" create configmap checkinout-script --from-file=script.js=scenarios/demo/checkinout.js \
  --dry-run=client -o yaml | kc apply -f -

if [ "${DEMO_SWEEP_RESET:-}" = 1 ]; then
  step "deleting the earlier sweep ${SWEEP} (its runs restore the environment first)"
  kc -n "${NS}" delete perfsweep "${SWEEP}" --ignore-not-found --timeout=600s
fi

# Every run restores what it changed: the Deployments' specs must be the same after the sweep.
deployments() { kc -n "${NS}" get deploy -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec}{"\n"}{end}' | sha256sum; }
before="$(deployments)"

step "the sweep ${SWEEP} (${SWEEP_DIR})"
# A CRD applied seconds ago may not be served yet.
wait_for "the PerfSweep API" 60 "" kc get perfsweeps -n "${NS}"
kc apply -k "${SWEEP_DIR}"

burner_pid=""
if [ -n "${DEMO_SWEEP_BURN_REPEATS:-}" ]; then
  step "a CPU burner during the runs of repeats ${DEMO_SWEEP_BURN_REPEATS}"
  burner_on() {
    kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: perfexp-burner}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: burn, namespace: perfexp-burner}
data:
  burn.js: |
    export const options = { vus: 1, duration: '3h', summaryTrendStats: ['avg'] };
    export default function () { let x = 0; for (let i = 0; i < 5e7; i++) { x += i % 7; } }
---
apiVersion: v1
kind: Pod
metadata: {name: burner, namespace: perfexp-burner}
spec:
  restartPolicy: Never
  containers:
  - name: k6
    image: perfexp/k6:v1.8.1
    imagePullPolicy: Never
    args: [run, --quiet, --no-summary, /burn/burn.js]
    resources: {requests: {cpu: 10m}, limits: {cpu: "1"}}
    volumeMounts: [{name: burn, mountPath: /burn}]
  volumes: [{name: burn, configMap: {name: burn}}]
YAML
  }
  burner_off() { kc -n perfexp-burner delete pod burner --ignore-not-found --wait=false >/dev/null 2>&1 || true; }
  (
    state=off
    while :; do
      # The repeats with a run in the environment now (not queued, not analysing after its restore, not ended).
      active="$(kc -n "${NS}" get perfexperiments -l "perfexp.dev/sweep=${SWEEP}" \
        -o jsonpath='{range .items[*]}{.metadata.labels.perfexp\.dev/repeat}{" "}{.status.phase}{"\n"}{end}' 2>/dev/null |
        awk '$2 != "" && $2 != "Pending" && $2 != "Queued" && $2 != "Analyzing" && $2 != "Confirming" && $2 != "Succeeded" && $2 != "Failed" && $2 != "Aborted" { print $1 }')"
      want=off
      for r in ${active}; do
        for b in ${DEMO_SWEEP_BURN_REPEATS}; do [ "${r}" = "${b}" ] && want=on; done
      done
      if [ "${want}" != "${state}" ]; then
        if [ "${want}" = on ]; then burner_on; else burner_off; fi
        printf '%s  CPU burner %s (runs in the environment from repeats: %s)\n' "$(date +%H:%M:%S)" "${want}" "$(echo ${active})" >&2
        state="${want}"
      fi
      sleep 5
    done
  ) &
  burner_pid=$!
  trap 'kill "${burner_pid}" 2>/dev/null; burner_off' EXIT
fi

step "waiting for the sweep to end (at most ${TIMEOUT}s; its runs go one at a time)"
deadline=$((SECONDS + TIMEOUT))
last=""
phase=""
while :; do
  table="$(kc -n "${NS}" get perfsweep "${SWEEP}" 2>&1 || true)"
  if [ "${table}" != "${last}" ]; then
    printf '%s  %s\n' "$(date +%H:%M:%S)" "${table//$'\n'/$'\n'          }" >&2
    last="${table}"
  fi
  phase="$(kc -n "${NS}" get perfsweep "${SWEEP}" -o jsonpath='{.status.phase}' 2>/dev/null || true)"
  case "${phase}" in
    Succeeded | Failed | Aborted) break ;;
  esac
  if [ "${SECONDS}" -ge "${deadline}" ]; then
    echo "The sweep had not ended after ${TIMEOUT}s (phase ${phase:-none})." >&2
    break
  fi
  sleep 10
done

step "the sweep's runs"
kc -n "${NS}" get perfexperiments -l "perfexp.dev/sweep=${SWEEP}" -o wide || true
after="$(deployments)"
if [ "${before}" = "${after}" ]; then
  echo "every Deployment of ${NS} has the same spec as before the sweep"
else
  echo "a Deployment of ${NS} differs from before the sweep" >&2
  phase="${phase}-not-restored"
fi

step "the sweep table (kubectl perfexp compare ${SWEEP})"
kc -n "${NS}" get perfsweep "${SWEEP}" -o jsonpath='{.status.message}{"\n"}' || true
plugin=()
if [ -x "${LOCALBIN:-${ROOT}/bin}/kubectl-perfexp" ]; then
  plugin=("${LOCALBIN:-${ROOT}/bin}/kubectl-perfexp")
elif command -v go >/dev/null 2>&1; then
  plugin=(go run ./cmd/kubectl-perfexp)
fi
if [ ${#plugin[@]} -gt 0 ]; then
  "${plugin[@]}" --kubeconfig "${KUBECONFIG_PATH}" -n "${NS}" compare "${SWEEP}" || true
else
  # Neither the plugin (make build) nor Go to build it: the report's Markdown holds the same table.
  kc -n "${NS}" get configmap "${SWEEP}-report" -o jsonpath='{.data.report\.md}' || true
  echo
fi

step "summary"
echo "sweep ${SWEEP}: phase ${phase:-none}; total $((SECONDS - t0))s"
echo "the full report: kubectl --kubeconfig ${KUBECONFIG_PATH} -n ${NS} get configmap ${SWEEP}-report -o jsonpath='{.data.report\\.md}'"
[ "${phase}" = Succeeded ]
