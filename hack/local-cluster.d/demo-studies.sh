#!/usr/bin/env bash
# `make demo-studies` / `make demo-study STUDY=<name>`: the short forms of the reference studies
# (scenarios/studies/<name>/short) on the library platform, one after another. The local cluster
# and the operator come up as for `make demo` (hack/local-cluster.d/demo.sh, SKIP_EXPERIMENTS=1),
# the platform as for `make platform-deploy`; then, per study: the hash of the platform's
# Deployment and StatefulSet specs, `kubectl apply -k`, a wait for every PerfSweep and
# PerfExperiment of the short form to end, the hash again (every run restores what it changed,
# so the two must be equal), and each object's report from its report ConfigMap. A summary
# line per study ends the output. Nothing is faked: a study that does not end is said so.
#
# Environment: STUDIES (names under scenarios/studies, run in this order; default all five),
# STUDY_TIMEOUT (seconds to wait for one study, default 1500), STUDIES_SKIP_DEPLOY=1 (the
# cluster, operator and platform already run: skip straight to the studies),
# STUDIES_KEEP=1 (do not delete an earlier run of a short form first; by default it is deleted,
# which restores the environment, so the study runs again).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=hack/local-cluster.d/lib.sh
source "${ROOT}/hack/local-cluster.d/lib.sh"
cd "${ROOT}"

NS="${PLATFORM_NS:-perfexp-platform}"
STUDIES="${STUDIES:-kafka-mode cpu-limits list-refresh-rw-split edge-parameter-sweep checkinout-load-soak}"
TIMEOUT="${STUDY_TIMEOUT:-1500}"
OPERATOR_NS=perfexp-system
OPERATOR_DEPLOY=perfexp-manager

step() { printf '\n==> %s\n' "$*" >&2; }

for study in ${STUDIES}; do
  [ -f "scenarios/studies/${study}/short/kustomization.yaml" ] ||
    die "no short form scenarios/studies/${study}/short (studies: $(ls scenarios/studies | grep -v -e scripts -e observe -e README | tr '\n' ' '))"
done

t0=${SECONDS}
if [ "${STUDIES_SKIP_DEPLOY:-}" != 1 ]; then
  step "cluster, operator and demo system (hack/local-cluster.d/demo.sh, SKIP_EXPERIMENTS=1)"
  SKIP_EXPERIMENTS=1 hack/local-cluster.d/demo.sh
  step "the library platform (make platform-deploy)"
  "${MAKE:-make}" --no-print-directory LOCALBIN="${LOCALBIN:-${ROOT}/bin}" LOCAL_KUBECONFIG="${KUBECONFIG_PATH}" \
    PLATFORM_NS="${NS}" platform-deploy
fi
if ! kc get crd perfsweeps.perfexp.dev >/dev/null 2>&1; then
  die "the PerfSweep CRD is not installed (config/crd did not apply); the studies cannot run"
fi
if ! kc -n "${OPERATOR_NS}" rollout status "deploy/${OPERATOR_DEPLOY}" --timeout=10s >/dev/null 2>&1; then
  die "the operator is not running (see the output above); the studies would wait forever"
fi

# objects_of prints kind/name of every PerfSweep and PerfExperiment a short form holds.
objects_of() {
  kc kustomize "scenarios/studies/$1/short" | awk '
    /^kind: / { kind = $2 }
    /^metadata:/ { inmeta = 1; next }
    inmeta && /^  name: / { if (kind == "PerfSweep" || kind == "PerfExperiment") print tolower(kind) "/" $2; inmeta = 0 }
    /^[a-z]/ { inmeta = 0 }'
}

phase_of() { kc -n "${NS}" get "$1" -o jsonpath='{.status.phase}' 2>/dev/null || true; }

summary=()
failed=0
for study in ${STUDIES}; do
  mapfile -t objs < <(objects_of "${study}")
  step "study ${study}: ${objs[*]}"
  if [ "${STUDIES_KEEP:-}" != 1 ]; then
    # Deleting a finished or running short form restores the environment it changed first.
    kc -n "${NS}" delete --ignore-not-found --timeout=600s "${objs[@]}"
  fi
  before="$(workloads_hash "${NS}")"
  echo "workloads' spec hash before: ${before}"
  start=${SECONDS}
  kc apply -k "scenarios/studies/${study}/short"
  deadline=$((SECONDS + TIMEOUT))
  last=""
  while :; do
    table="$(kc -n "${NS}" get "${objs[@]}" 2>&1 || true)"
    if [ "${table}" != "${last}" ]; then
      printf '%s  %s\n' "$(date +%H:%M:%S)" "${table//$'\n'/$'\n'          }" >&2
      last="${table}"
    fi
    pending=0
    for o in "${objs[@]}"; do
      case "$(phase_of "${o}")" in
        Succeeded | Failed | Aborted) ;;
        *) pending=$((pending + 1)) ;;
      esac
    done
    [ "${pending}" -gt 0 ] || break
    if [ "${SECONDS}" -ge "${deadline}" ]; then
      echo "study ${study}: ${pending} object(s) had not ended after ${TIMEOUT}s" >&2
      break
    fi
    sleep 10
  done
  wall=$((SECONDS - start))
  after="$(hash_after "${NS}" "${before}")"
  restored=yes
  [ "${after}" = "${before}" ] || restored=NO
  echo "workloads' spec hash after:  ${after} (restored: ${restored})"

  phases=()
  sweep_runs=()
  for o in "${objs[@]}"; do
    name="${o#*/}"
    phase="$(phase_of "${o}")"
    phases+=("${name}=${phase:-none}")
    case "${phase}" in Succeeded) ;; *) failed=1 ;; esac
    if [ "${o%%/*}" = perfsweep ]; then
      # A sweep ends Succeeded even when some of its runs failed: list them, and count a failed
      # run as a failure of the study.
      kc -n "${NS}" get perfexperiments -l "perfexp.dev/sweep=${name}" -o wide || true
      bad="$(kc -n "${NS}" get perfexperiments -l "perfexp.dev/sweep=${name}" \
        -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.phase}{"\n"}{end}' | grep -v ' Succeeded$' || true)"
      if [ -n "${bad}" ]; then
        phases+=("failed-runs:$(echo "${bad}" | wc -l)")
        failed=1
      fi
      sweep_runs+=("${name}")
    fi
    step "report of ${o} (phase ${phase:-none})"
    msg="$(kc -n "${NS}" get "${o}" -o jsonpath='{.status.message}' 2>/dev/null || true)"
    [ -z "${msg}" ] || echo "message: ${msg}"
    report="$(kc -n "${NS}" get "${o}" -o jsonpath='{.status.reportRef.name}' 2>/dev/null || true)"
    if [ -n "${report}" ] && kc -n "${NS}" get configmap "${report}" >/dev/null 2>&1; then
      kc -n "${NS}" get configmap "${report}" -o jsonpath='{.data.report\.md}'
      echo
    else
      echo "no report ConfigMap (status.reportRef) was written for ${o}"
      failed=1
    fi
  done
  # The runs' own reports hold the per-service CPU and memory, the node's load and the custom
  # queries (database, brokers) the sweep table leaves out: those sections, run by run.
  for sweep in "${sweep_runs[@]}"; do
    for run in $(kc -n "${NS}" get perfexperiments -l "perfexp.dev/sweep=${sweep}" -o name | sort); do
      report="$(kc -n "${NS}" get "${run}" -o jsonpath='{.status.reportRef.name}' 2>/dev/null || true)"
      [ -n "${report}" ] || continue
      step "run ${run#*/}: services, node and custom queries (from ConfigMap ${report})"
      kc -n "${NS}" get configmap "${report}" -o jsonpath='{.data.report\.md}' | awk '
        /^## / { keep = ($0 ~ /^## (Summary|Services: CPU|Services: memory|Load generators and node|Custom queries)$/) }
        keep'
    done
  done
  [ "${restored}" = yes ] || failed=1
  summary+=("$(printf '%-24s %5ss  hash %s -> %s (restored: %s)  %s' "${study}" "${wall}" "${before}" "${after}" "${restored}" "${phases[*]}")")
done

step "summary (wall time per study from apply to the last object's end)"
printf '%s\n' "${summary[@]}"
echo "total $((SECONDS - t0))s; reports: kubectl -n ${NS} get configmap <name>-report -o jsonpath='{.data.report\\.md}'"
[ "${failed}" = 0 ]
