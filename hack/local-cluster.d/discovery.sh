#!/usr/bin/env bash
# Service discovery for the local cluster's Prometheus. Debian builds Prometheus without its
# Kubernetes discovery, so this loop asks the API server every few seconds for the pods and
# Services that want to be scraped and writes them as file_sd target files, which Prometheus
# re-reads when they change. hack/local-cluster starts and stops it like any other component.
#
# Targets:
#   pods.json      Running pods annotated prometheus.io/scrape="true" (port from
#                  prometheus.io/port or the first container port, path from prometheus.io/path)
#   operator.json  endpoints of Services labelled app.kubernetes.io/name=perfexp whose port is
#                  named https, metrics or https-metrics (the operator's metrics Service)
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=hack/local-cluster.d/lib.sh
source "${ROOT}/hack/local-cluster.d/lib.sh"

SD="${STATE}/prometheus/sd"
TOKEN="${STATE}/prometheus/token"
API="https://127.0.0.1:${APISERVER_PORT}"
INTERVAL="${DISCOVERY_INTERVAL:-5}"

get() {
  curl -fsS --max-time 10 --cacert "${PKI}/ca.crt" -H "Authorization: Bearer $(cat "${TOKEN}")" "${API}$1"
}

# publish FILE: stdin -> FILE, only when the content changed (Prometheus reloads on every write).
publish() {
  local new
  new="$(cat)"
  [ "${new}" = "$(cat "$1" 2>/dev/null)" ] && return 0
  printf '%s\n' "${new}" >"$1.tmp" && mv "$1.tmp" "$1"
}

PODS_JQ='[.items[]
  | select(.metadata.annotations["prometheus.io/scrape"] == "true")
  | select(.status.phase == "Running" and (.status.podIP // "") != "")
  | {targets: [.status.podIP + ":" + (.metadata.annotations["prometheus.io/port"]
        // ([.spec.containers[].ports[]?.containerPort][0] // 80 | tostring))],
     labels: {
       __metrics_path__: (.metadata.annotations["prometheus.io/path"] // "/metrics"),
       namespace: .metadata.namespace,
       pod: .metadata.name,
       container: .spec.containers[0].name,
       job: (.metadata.labels["app.kubernetes.io/name"] // "kubernetes-pods")}}]'

# shellcheck disable=SC2016 # jq variables, not shell ones
OPERATOR_JQ='[.items[] as $s
  | $s.ports[]? | select(.name == "https" or .name == "metrics" or .name == "https-metrics") as $p
  | $s.endpoints[]? | select(.conditions.ready != false)
  | {targets: [.addresses[0] + ":" + ($p.port | tostring)],
     labels: {
       namespace: $s.metadata.namespace,
       service: $s.metadata.labels["kubernetes.io/service-name"],
       pod: (.targetRef.name // ""),
       job: $s.metadata.labels["kubernetes.io/service-name"]}}]'

mkdir -p "${SD}"
[ -f "${SD}/pods.json" ] || echo '[]' >"${SD}/pods.json"
[ -f "${SD}/operator.json" ] || echo '[]' >"${SD}/operator.json"
while true; do
  # A failed query keeps the previous targets: a restarting API server must not make
  # Prometheus drop the series it is scraping.
  if pods="$(get /api/v1/pods)"; then
    jq -c "${PODS_JQ}" <<<"${pods}" | publish "${SD}/pods.json"
  fi
  if slices="$(get "/apis/discovery.k8s.io/v1/endpointslices?labelSelector=app.kubernetes.io%2Fname%3Dperfexp")"; then
    jq -c "${OPERATOR_JQ}" <<<"${slices}" | publish "${SD}/operator.json"
  fi
  sleep "${INTERVAL}"
done
