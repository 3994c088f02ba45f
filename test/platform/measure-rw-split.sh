#!/usr/bin/env bash
# A hand-run check of the read/write split on the deployed platform, without the operator: for
# READ_FROM_REPLICA=false and then true on every service, it seeds the data, fires ROUNDS rounds
# of LISTS concurrent list refreshes spread over the three tenants through the gateway, and
# prints the refreshes that failed, the lists left isRefreshing, and from Prometheus the CPU
# seconds of the writer's and the reader's postgres containers and the writer's peak client
# connections (postgres_exporter). Leaves READ_FROM_REPLICA=false.
#
# Usage: test/platform/measure-rw-split.sh [LISTS] [ROUNDS]   (30 3)
set -euo pipefail
LISTS="${1:-30}" ROUNDS="${2:-3}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NS="${PLATFORM_NS:-perfexp-platform}"
PROM="${PROM_URL:-http://127.0.0.1:9090}"
K=(kubectl --kubeconfig "${LOCAL_KUBECONFIG:-/var/lib/perfexp-local/kubeconfig}" -n "${NS}")
GW="http://$("${K[@]}" get svc gateway -o jsonpath='{.spec.clusterIP}'):8080"
TENANTS=(diku east west)

# cpu POD prints the CPU seconds the pod's postgres container used so far (cAdvisor; the kubelet
# exports each container twice, so max picks one).
cpu() {
  curl -s "${PROM}/api/v1/query" --data-urlencode \
    "query=max(container_cpu_usage_seconds_total{namespace=\"${NS}\",pod=\"$1\",container=\"postgres\"})" |
    jq -r '.data.result[0].value[1] // "0"'
}
peak_conns() {
  curl -s "${PROM}/api/v1/query" --data-urlencode \
    "query=max_over_time(sum(pg_connections_count{namespace=\"${NS}\",pod=\"$1\"})[$2s:5s])" |
    jq -r '.data.result[0].value[1] // "0"'
}

for split in false true; do
  "${K[@]}" set env deploy -l app.kubernetes.io/component=service READ_FROM_REPLICA="${split}" >/dev/null
  "${K[@]}" rollout status deploy -l app.kubernetes.io/component=service --timeout=180s >/dev/null
  "${HERE}/seed.sh" >/dev/null
  sleep 20
  w0="$(cpu postgres-writer-0)" r0="$(cpu postgres-reader-0)" start="$(date +%s)"
  failed=0 total=0
  for _ in $(seq "${ROUNDS}"); do
    codes="$(for i in $(seq "${LISTS}"); do
      curl -s -o /dev/null -w '%{http_code}\n' -XPOST -H "X-Tenant: ${TENANTS[$((i % 3))]}" \
        "${GW}/lists/list-$(((i % 10) + 1))/refresh" &
    done; wait)"
    total=$((total + LISTS))
    failed=$((failed + $(grep -vc '^200$' <<<"${codes}" || true)))
    stuck=0
    for t in "${TENANTS[@]}"; do
      n="$(curl -s -XPOST -H "X-Tenant: ${t}" "${GW}/lists/reset-stuck" | jq -r .reset)"
      stuck=$((stuck + n))
    done
    echo "READ_FROM_REPLICA=${split}: round of ${LISTS}: $(grep -vc '^200$' <<<"${codes}" || true) failed, ${stuck} left isRefreshing (reset)"
  done
  sleep 20
  secs=$(($(date +%s) - start))
  w1="$(cpu postgres-writer-0)" r1="$(cpu postgres-reader-0)"
  printf 'READ_FROM_REPLICA=%s: %d/%d refreshes failed in %ds; writer CPU %.2f s, reader CPU %.2f s, writer peak connections %s\n' \
    "${split}" "${failed}" "${total}" "${secs}" "$(echo "${w1} - ${w0}" | bc)" "$(echo "${r1} - ${r0}" | bc)" \
    "$(peak_conns postgres-writer-0 "${secs}")"
done
"${K[@]}" set env deploy -l app.kubernetes.io/component=service READ_FROM_REPLICA=false >/dev/null
