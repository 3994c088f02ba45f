#!/usr/bin/env bash
# `make demo-capacity` and `make demo-bisect`: the local cluster, the operator and the demo
# system under test (as `make demo` brings them up, without its experiments), then the searches
# of one directory (scenarios/demo-capacity: two capacity searches, with and without
# circulation's CPU limit; scenarios/demo-bisect: a bisect over the demo's images), applied at
# once so they share the demo's queue. It waits for every search to end and prints the answers,
# the runs, each search's report (`kubectl perfexp compare`) and the hash of the workloads'
# specs before and after (every run restores what it changed). Every step that cannot run is
# named in the output; nothing is faked.
#
# Environment: SEARCH_DIR (required), SEARCH_TIMEOUT (seconds to wait, default 2400),
# SEARCH_IMAGES (images hack/images/build.sh builds beside the demo's, e.g. demo-next),
# SEARCH_KEEP=1 (leave earlier searches of the directory as they are: by default they are
# deleted first, which restores the environment, so the searches run again),
# DEMO_NAMESPACE (default perfexp-demo).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=hack/local-cluster.d/lib.sh
source "${ROOT}/hack/local-cluster.d/lib.sh"
cd "${ROOT}"

NS="${DEMO_NAMESPACE:-perfexp-demo}"
DIR="${SEARCH_DIR:?SEARCH_DIR names the directory of the searches, e.g. scenarios/demo-capacity}"
TIMEOUT="${SEARCH_TIMEOUT:-2400}"
OPERATOR_NS=perfexp-system
OPERATOR_DEPLOY=perfexp-manager

step() { printf '\n==> %s\n' "$*" >&2; }

t0=${SECONDS}
step "cluster, operator and demo system (hack/local-cluster.d/demo.sh, SKIP_EXPERIMENTS=1)"
SKIP_EXPERIMENTS=1 DEMO_NAMESPACE="${NS}" hack/local-cluster.d/demo.sh
if [ -n "${SEARCH_IMAGES:-}" ]; then
  step "images ${SEARCH_IMAGES}"
  # shellcheck disable=SC2086 # a list of image names
  hack/images/build.sh ${SEARCH_IMAGES}
fi
t_deployed=$((SECONDS - t0))

if ! kc get crd perfsweeps.perfexp.dev >/dev/null 2>&1; then
  die "the PerfSweep CRD is not installed (config/crd did not apply); the searches cannot run"
fi
if ! kc -n "${OPERATOR_NS}" rollout status "deploy/${OPERATOR_DEPLOY}" --timeout=10s >/dev/null 2>&1; then
  die "the operator is not running (see the output above); the searches would wait forever"
fi

step "the check-in/check-out script (ConfigMap checkinout-script in ${NS})"
kc -n "${NS}" create configmap checkinout-script --from-file=script.js=scenarios/demo/checkinout.js \
  --dry-run=client -o yaml | kc apply -f -

mapfile -t sweeps < <(kc kustomize "${DIR}" | awk '
  /^kind: / { kind = $2 }
  /^metadata:/ { inmeta = 1; next }
  inmeta && /^  name: / { if (kind == "PerfSweep") print $2; inmeta = 0 }
  /^[a-z]/ { inmeta = 0 }')
[ ${#sweeps[@]} -gt 0 ] || die "${DIR} holds no PerfSweep"
objs=()
for s in "${sweeps[@]}"; do objs+=("perfsweep/${s}"); done

# A CRD applied seconds ago may not be served yet.
wait_for "the PerfSweep API" 60 "" kc get perfsweeps -n "${NS}"
if [ "${SEARCH_KEEP:-}" != 1 ]; then
  step "deleting earlier runs of ${sweeps[*]} (their runs restore the environment first)"
  kc -n "${NS}" delete --ignore-not-found --timeout=600s "${objs[@]}"
fi

before="$(workloads_hash "${NS}")"
echo "workloads' spec hash before: ${before}"
step "the searches ${sweeps[*]} (${DIR})"
start=${SECONDS}
kc apply -k "${DIR}"

step "waiting for the searches to end (at most ${TIMEOUT}s; their runs take turns on the demo)"
phase_of() { kc -n "${NS}" get "perfsweep/$1" -o jsonpath='{.status.phase}' 2>/dev/null || true; }
deadline=$((SECONDS + TIMEOUT))
last=""
declare -A took=()
while :; do
  table="$(kc -n "${NS}" get "${objs[@]}" 2>&1 || true)"
  if [ "${table}" != "${last}" ]; then
    printf '%s  %s\n' "$(date +%H:%M:%S)" "${table//$'\n'/$'\n'          }" >&2
    last="${table}"
  fi
  pending=0
  for s in "${sweeps[@]}"; do
    case "$(phase_of "${s}")" in
      Succeeded | Failed | Aborted) [ -n "${took[${s}]:-}" ] || took[${s}]=$((SECONDS - start)) ;;
      *) pending=$((pending + 1)) ;;
    esac
  done
  [ "${pending}" -gt 0 ] || break
  if [ "${SECONDS}" -ge "${deadline}" ]; then
    echo "${pending} search(es) had not ended after ${TIMEOUT}s" >&2
    break
  fi
  sleep 10
done
wall=$((SECONDS - start))

after="$(hash_after "${NS}" "${before}")"
restored=yes
[ "${after}" = "${before}" ] || restored=NO
echo "workloads' spec hash after:  ${after} (restored: ${restored})"

plugin=()
if [ -x "${LOCALBIN:-${ROOT}/bin}/kubectl-perfexp" ]; then
  plugin=("${LOCALBIN:-${ROOT}/bin}/kubectl-perfexp")
elif command -v go >/dev/null 2>&1; then
  plugin=(go run ./cmd/kubectl-perfexp)
fi

failed=0
[ "${restored}" = yes ] || failed=1
answers=()
for s in "${sweeps[@]}"; do
  phase="$(phase_of "${s}")"
  [ "${phase}" = Succeeded ] || failed=1
  step "${s}: phase ${phase:-none}; its runs"
  kc -n "${NS}" get perfexperiments -l "perfexp.dev/sweep=${s}" -o wide || true
  runs="$(kc -n "${NS}" get perfexperiments -l "perfexp.dev/sweep=${s}" -o name | wc -l)"
  bad="$(kc -n "${NS}" get perfexperiments -l "perfexp.dev/sweep=${s}" \
    -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.phase}{"\n"}{end}' | grep -cv ' Succeeded$' || true)"
  if [ -n "$(kc -n "${NS}" get "perfsweep/${s}" -o jsonpath='{.spec.capacity.parameter}')" ]; then
    answer="$(kc -n "${NS}" get "perfsweep/${s}" -o jsonpath='capacity {.status.capacity.summary} (last held {.status.capacity.lastHeld}, first broken {.status.capacity.firstBroken}); limiting: {.status.capacity.limitingFactor}; stop: {.status.capacity.stopReason}')"
    kc -n "${NS}" get "perfsweep/${s}" \
      -o jsonpath='{range .status.capacity.probes[*]}probe {.load}: {.outcome}, {.runs} run(s): {.message}{"\n"}{end}' || true
  else
    answer="$(kc -n "${NS}" get "perfsweep/${s}" -o jsonpath='culprit {.status.bisect.summary}; stop: {.status.bisect.stopReason}')"
    kc -n "${NS}" get "perfsweep/${s}" \
      -o jsonpath='{range .status.bisect.steps[*]}step {.description}: {.outcome} after {.repeats} repeat(s): {.message}{"\n"}{end}' || true
  fi
  echo "${answer}"
  answers+=("$(printf '%s: phase %s after %ss, %s run(s) (%s not Succeeded); %s' \
    "${s}" "${phase:-none}" "${took[${s}]:-?}" "${runs}" "${bad}" "${answer}")")
  [ "${bad}" = 0 ] || failed=1
  step "${s}: the report (kubectl perfexp compare ${s})"
  if [ ${#plugin[@]} -gt 0 ]; then
    "${plugin[@]}" --kubeconfig "${KUBECONFIG_PATH}" -n "${NS}" compare "${s}" || true
  else
    kc -n "${NS}" get configmap "${s}-report" -o jsonpath='{.data.report\.md}' || true
    echo
  fi
done

step "summary"
printf '%s\n' "${answers[@]}"
echo "workloads' spec hash ${before} -> ${after} (restored: ${restored})"
echo "wall time from apply to the last search's end: ${wall}s; total $((SECONDS - t0))s (deployed after ${t_deployed}s)"
echo "the full reports: kubectl --kubeconfig ${KUBECONFIG_PATH} -n ${NS} get configmap <search>-report -o jsonpath='{.data.report\\.md}'"
[ "${failed}" = 0 ]
