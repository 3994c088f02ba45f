#!/usr/bin/env bash
# `make demo`: the local cluster, the operator, the demo system under test and the demo
# experiments, then their results. Every step that cannot run yet (the operator does not build,
# the CRD is missing, no report was written) is named in the output and the rest goes on:
# nothing is faked.
#
# Environment: DEMO_TIMEOUT (seconds to wait for the experiments, default 2400),
# DEMO_NAMESPACE (default perfexp-demo), SKIP_EXPERIMENTS=1 (stop after deploying).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=hack/local-cluster.d/lib.sh
source "${ROOT}/hack/local-cluster.d/lib.sh"
# shellcheck source=hack/local-cluster.d/demo-load.sh
source "${ROOT}/hack/local-cluster.d/demo-load.sh"
cd "${ROOT}"

NS="${DEMO_NAMESPACE:-perfexp-demo}"
TIMEOUT="${DEMO_TIMEOUT:-2400}"
OPERATOR_NS=perfexp-system
OPERATOR_DEPLOY=perfexp-manager
missing=()

step() { printf '\n==> %s\n' "$*" >&2; }

t0=${SECONDS}
step "local cluster"
hack/local-cluster up
t_cluster=$((SECONDS - t0))

step "images (k6, demo services and inventory's next release, operator)"
hack/images/build.sh all demo-next

step "operator"
operator=running
if [ ! -f config/local/kustomization.yaml ]; then
  missing+=("operator: config/local does not exist yet, so it was not deployed")
  operator=missing
elif ! "${CTR[@]}" images ls -q 'name==docker.io/perfexp/manager:dev' | grep -q .; then
  missing+=("operator: the image perfexp/manager:dev could not be built (./cmd/manager missing or not compiling); only its CRD was installed")
  operator=missing
  kc apply --server-side --force-conflicts -k config/crd || missing+=("operator: config/crd did not apply")
else
  existed=0
  kc -n "${OPERATOR_NS}" get "deploy/${OPERATOR_DEPLOY}" >/dev/null 2>&1 && existed=1
  kc apply --server-side --force-conflicts -k config/local
  # A rebuilt image keeps its tag: restart a running operator so it runs the binary just built.
  [ "${existed}" = 0 ] || kc -n "${OPERATOR_NS}" rollout restart "deploy/${OPERATOR_DEPLOY}" >/dev/null
  if ! kc -n "${OPERATOR_NS}" rollout status "deploy/${OPERATOR_DEPLOY}" --timeout=180s; then
    kc -n "${OPERATOR_NS}" logs "deploy/${OPERATOR_DEPLOY}" --tail=30 >&2 || true
    missing+=("operator: deployed but not ready (its log is above)")
    operator=notready
  fi
fi

step "demo system under test in namespace ${NS}"
kc apply -k test/demoapp/deploy
kc -n "${NS}" rollout status deploy --timeout=180s
t_ready=$((SECONDS - t0))

crd=1
kc get crd perfexperiments.perfexp.dev >/dev/null 2>&1 || crd=0
if [ "${SKIP_EXPERIMENTS:-}" = 1 ]; then
  step "experiments skipped (SKIP_EXPERIMENTS=1)"
elif [ "${crd}" = 0 ]; then
  missing+=("experiments: the PerfExperiment CRD is not installed, so scenarios/demo was not applied")
else
  # A CRD applied seconds ago may not be served yet.
  wait_for "the PerfExperiment API" 60 "" kc get perfexperiments -n "${NS}"
  step "offered load"
  # An experiment's spec is frozen once it is queued: a second `make demo` keeps the rate its
  # experiments were created with.
  rate="$(kc -n "${NS}" get perfexperiment demo-baseline -o jsonpath='{.spec.load.scenarios[0].arrivalRate.rate}' 2>/dev/null || true)"
  if [ -n "${rate}" ]; then
    note="$(kc -n "${NS}" get perfexperiment demo-baseline -o jsonpath='{.metadata.annotations.demo\.perfexp\.dev/offered-load}' 2>/dev/null || true)"
    echo "the demo experiments exist already and offer ${rate} iterations/s${note:+ (${note})}"
  elif [ -n "${DEMO_RATE:-}" ]; then
    rate="${DEMO_RATE}"
    note="${rate} iterations/s, set by DEMO_RATE"
    echo "offering ${note}"
  else
    # The probe needs the script ConfigMap the experiments use.
    kc -n "${NS}" create configmap checkinout-script --from-file=script.js=scenarios/demo/checkinout.js \
      --dry-run=client -o yaml | kc apply -f - >/dev/null
    echo "measuring the demo's capacity: ${DEMO_PROBE_SECONDS} s of closed-loop load (8 VUs, no think time)"
    capacity="$(demo_probe_capacity "${NS}")"
    if [ -z "${capacity}" ]; then
      rate=10
      note="10 iterations/s: the capacity probe failed, so a conservative rate"
      missing+=("offered load: the capacity probe gave no figure (its log is above); the demo offers 10 iterations/s")
    else
      rate="$(demo_offered_rate "${capacity}")"
      capacity="$(printf '%.1f' "${capacity}")"
      note="${rate} iterations/s = ${DEMO_LOAD_PERCENT} % of the ${capacity} iterations/s the demo sustained closed-loop on this machine"
    fi
    echo "offering ${note}"
  fi
  step "demo experiments (scenarios/demo at ${rate} iterations/s)"
  kc apply -k "$(demo_overlay "${rate}" "${note}")"
  # The demo's own experiments: a sweep's runs (make demo-sweep and its kin share the namespace)
  # are left out of the wait and the results.
  own=(-l '!perfexp.dev/sweep')
  if [ "${operator}" != running ]; then
    missing+=("experiments: applied, but no operator runs them, so they stay without a phase")
  else
    step "waiting for the experiments to finish (at most ${TIMEOUT}s; they run one at a time)"
    deadline=$((SECONDS + TIMEOUT))
    last=""
    while :; do
      table="$(kc -n "${NS}" get perfexperiments "${own[@]}" 2>&1 || true)"
      if [ "${table}" != "${last}" ]; then
        printf '%s  %s\n' "$(date +%H:%M:%S)" "${table//$'\n'/$'\n'          }" >&2
        last="${table}"
      fi
      pending="$(kc -n "${NS}" get perfexperiments "${own[@]}" -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' \
        | grep -cvE '^(Succeeded|Failed|Aborted)$' || true)"
      [ "${pending}" -gt 0 ] || break
      if [ "${SECONDS}" -ge "${deadline}" ]; then
        missing+=("experiments: ${pending} had not finished after ${TIMEOUT}s")
        break
      fi
      sleep 10
    done
  fi

  step "results"
  kc -n "${NS}" get perfexperiments "${own[@]}" -o wide || true
  for exp in $(kc -n "${NS}" get perfexperiments "${own[@]}" -o name); do
    name="${exp##*/}"
    printf '\n--- %s: phase=%s verdict=%s\n' "${name}" \
      "$(kc -n "${NS}" get "${exp}" -o jsonpath='{.status.phase}')" \
      "$(kc -n "${NS}" get "${exp}" -o jsonpath='{.status.verdict}')"
    msg="$(kc -n "${NS}" get "${exp}" -o jsonpath='{.status.message}')"
    [ -z "${msg}" ] || echo "message: ${msg}"
    report="$(kc -n "${NS}" get "${exp}" -o jsonpath='{.status.reportRef.name}')"
    if [ -n "${report}" ] && kc -n "${NS}" get configmap "${report}" >/dev/null 2>&1; then
      kc -n "${NS}" get configmap "${report}" -o jsonpath='{.data.report\.md}'
      echo
    else
      results="$(kc -n "${NS}" get "${exp}" -o jsonpath='{.status.results}')"
      if [ -n "${results}" ]; then
        echo "results: ${results}"
      fi
      missing+=("report of ${name}: no report ConfigMap (status.reportRef) was written")
    fi
  done
fi

if [ "${crd}" = 1 ] && [ "${SKIP_EXPERIMENTS:-}" != 1 ]; then
  step "answers"
  # One line per experiment: the answer that counts (a confirmation's when the experiment
  # confirmed itself) and, for anything but a decided change, why, up to its first "; ".
  for exp in $(kc -n "${NS}" get perfexperiments "${own[@]}" -o name); do
    name="${exp##*/}"
    answer="$(kc -n "${NS}" get "${exp}" -o jsonpath='{.status.confirmation.change}')"
    why="$(kc -n "${NS}" get "${exp}" -o jsonpath='{.status.confirmation.message}')"
    if [ -z "${answer}" ]; then
      answer="$(kc -n "${NS}" get "${exp}" -o jsonpath='{.status.comparison.change}')"
      why="$(kc -n "${NS}" get "${exp}" -o jsonpath='{range .status.comparison.metrics[?(@.primary==true)]}{.why}{"\n"}{end}' | grep -m1 . || true)"
      [ -n "${why}" ] || why="$(kc -n "${NS}" get "${exp}" -o jsonpath='{.status.comparison.message}')"
    fi
    verdict="$(kc -n "${NS}" get "${exp}" -o jsonpath='{.status.verdict}')"
    case "${answer}" in
      "") answer="baseline"; why="" ;;
      Regressed | Improved | NoMeaningfulChange) why="" ;;
    esac
    printf '%-22s %-19s verdict %-5s %s\n' "${name}" "${answer}" "${verdict:--}" "${why%%; *}"
  done
fi

step "summary"
echo "cluster up in ${t_cluster}s; operator and demo deployed after ${t_ready}s; total $((SECONDS - t0))s"
echo "kubeconfig: ${KUBECONFIG_PATH}   (export KUBECONFIG=${KUBECONFIG_PATH})"
echo "Prometheus: http://127.0.0.1:${PROMETHEUS_PORT}"
if [ ${#missing[@]} -gt 0 ]; then
  echo
  echo "Not available yet:"
  printf '  - %s\n' "${missing[@]}"
fi
