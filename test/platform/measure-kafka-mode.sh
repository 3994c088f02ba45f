#!/usr/bin/env bash
# A hand-run check of the two Kafka clusters, without the operator: for KAFKA_BOOTSTRAP
# kafka-zk:9092 (ZooKeeper mode) and then kafka-kraft:9092 (KRaft mode) on circulation and
# import, it imports RECORDS records per tenant (produced to Kafka, consumed by the import service,
# written to PostgreSQL), waits until all are in the database, and prints the import time and,
# from Prometheus, each broker's CPU seconds (JMX exporter's process_cpu_seconds_total) and
# ZooKeeper's. Leaves KAFKA_BOOTSTRAP=kafka-zk:9092.
#
# Usage: test/platform/measure-kafka-mode.sh [RECORDS]   (25000)
set -euo pipefail
RECORDS="${1:-25000}"
NS="${PLATFORM_NS:-perfexp-platform}"
PROM="${PROM_URL:-http://127.0.0.1:9090}"
K=(kubectl --kubeconfig "${LOCAL_KUBECONFIG:-/var/lib/perfexp-local/kubeconfig}" -n "${NS}")
GW="http://$("${K[@]}" get svc gateway -o jsonpath='{.spec.clusterIP}'):8080"
TENANTS=(diku east west)

jvm_cpu() {
  curl -s "${PROM}/api/v1/query" --data-urlencode \
    "query=max(process_cpu_seconds_total{namespace=\"${NS}\",pod=~\"$1-[a-z0-9]+-[a-z0-9]+\"})" |
    jq -r '.data.result[0].value[1] // "0"'
}

for bootstrap in kafka-zk:9092 kafka-kraft:9092; do
  "${K[@]}" set env deploy/circulation deploy/import KAFKA_BOOTSTRAP="${bootstrap}" >/dev/null
  "${K[@]}" rollout status deploy/circulation deploy/import --timeout=180s >/dev/null
  for t in "${TENANTS[@]}"; do curl -s -XPOST -H "X-Tenant: ${t}" "${GW}/import/reset" >/dev/null; done
  sleep 20
  zk0="$(jvm_cpu kafka-zk)" kr0="$(jvm_cpu kafka-kraft)" z0="$(jvm_cpu zookeeper)"
  run="run$(date +%s)" start="$(date +%s.%N)"
  for t in "${TENANTS[@]}"; do
    curl -sf -XPOST -H "X-Tenant: ${t}" "${GW}/import/produce?n=${RECORDS}&run=${run}" >/dev/null &
  done
  wait
  for t in "${TENANTS[@]}"; do
    until [ "$(curl -s -H "X-Tenant: ${t}" "${GW}/import/count?run=${run}" | jq -r .records)" -ge "${RECORDS}" ]; do
      sleep 0.5
    done
  done
  took="$(echo "$(date +%s.%N) - ${start}" | bc)"
  sleep 20
  printf '%s: %d records x 3 tenants imported in %.1f s; CPU s: kafka-zk %.2f, kafka-kraft %.2f, zookeeper %.2f\n' \
    "${bootstrap}" "${RECORDS}" "${took}" "$(echo "$(jvm_cpu kafka-zk) - ${zk0}" | bc)" \
    "$(echo "$(jvm_cpu kafka-kraft) - ${kr0}" | bc)" "$(echo "$(jvm_cpu zookeeper) - ${z0}" | bc)"
done
"${K[@]}" set env deploy/circulation deploy/import KAFKA_BOOTSTRAP=kafka-zk:9092 >/dev/null
