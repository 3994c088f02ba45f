#!/usr/bin/env bash
# `make demo-soak`: the memory-leak soak of the demo, twice at once. The local cluster and the
# operator come up as for `make demo`; then two copies of the demo system, in namespaces
# perfexp-soak-clean and perfexp-soak-leak, each run scenarios/demo-soak/soak.yaml for
# SOAK_DURATION: the clean one with LEAK_BYTES_PER_REQUEST=0, the other with SOAK_LEAK_BYTES
# (default 512) on circulation. They are two environments, so two queues: both run at the same
# time. At the end the workloads section of both reports is printed, and the injected rate
# (bytes per request x circulation's requests per hour, from the report's request count).
#
# Environment: SOAK_DURATION (default 45m; the leak verdict needs 30m), SOAK_LEAK_BYTES
# (default 512), SOAK_RESET=1 (delete earlier soaks first).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=hack/local-cluster.d/lib.sh
source "${ROOT}/hack/local-cluster.d/lib.sh"
cd "${ROOT}"

DURATION="${SOAK_DURATION:-45m}"
LEAK="${SOAK_LEAK_BYTES:-512}"
step() { printf '\n==> %s\n' "$*" >&2; }

step "cluster, operator and demo system (hack/local-cluster.d/demo.sh, SKIP_EXPERIMENTS=1)"
SKIP_EXPERIMENTS=1 hack/local-cluster.d/demo.sh

for kind in clean leak; do
  ns="perfexp-soak-${kind}"
  bytes=0 desc="as deployed, no leak"
  if [ "${kind}" = leak ]; then bytes="${LEAK}" desc="circulation leaks ${LEAK} bytes per request"; fi
  step "${ns}: the demo system and the soak (${desc}, ${DURATION})"
  kc create namespace "${ns}" --dry-run=client -o yaml | kc apply -f -
  kc label namespace "${ns}" perfexp.dev/allow-experiments=true --overwrite >/dev/null
  if [ "${SOAK_RESET:-}" = 1 ]; then
    kc -n "${ns}" delete perfexperiment soak --ignore-not-found --timeout=600s
  fi
  kc apply -n "${ns}" -k test/demoapp/deploy/base
  kc -n "${ns}" create configmap checkinout-script --from-file=script.js=scenarios/demo/checkinout.js \
    --dry-run=client -o yaml | kc apply -f -
  kc -n "${ns}" rollout status deploy --timeout=180s
  sed -e "s/description: as deployed, no leak/description: ${desc}/" -e "s/value: \"0\"/value: \"${bytes}\"/" \
    -e "s/duration: 45m/duration: ${DURATION}/" scenarios/demo-soak/soak.yaml | kc apply -n "${ns}" -f -
done

step "waiting for both soaks (the duration, then the analysis)"
for ns in perfexp-soak-clean perfexp-soak-leak; do
  until phase="$(kc -n "${ns}" get perfexperiment soak -o jsonpath='{.status.phase}')" &&
    { [ "${phase}" = Succeeded ] || [ "${phase}" = Failed ]; }; do
    sleep 30
  done
  echo "${ns}: ${phase}" >&2
done

for ns in perfexp-soak-clean perfexp-soak-leak; do
  step "${ns}: memory"
  kc -n "${ns}" get configmap soak-report -o jsonpath='{.data.results\.json}' | python3 -c '
import json, sys
r = json.load(sys.stdin)
reqs = r["total"]["requests"]
secs = r["window"]["measuredSeconds"]
print("requests %d in %.0f s (%.1f per second; circulation serves each)" % (reqs, secs, reqs / secs))
for w in r.get("workloads", []):
    g = w.get("memoryGrowthPerHour")
    print("%-16s leak %-15s growth/h %s  trend z %s" % (w["name"], w.get("leak", "-"),
          "%.2f MiB" % (g / 2**20) if g is not None else "-", w.get("memoryTrendZ", "-")))
'
  bytes="$(kc -n "${ns}" get deploy circulation -o jsonpath='{.spec.template.spec.containers[0].env[?(@.name=="LEAK_BYTES_PER_REQUEST")].value}')"
  echo "(circulation's LEAK_BYTES_PER_REQUEST after the restore: '${bytes:-unset}')"
done
