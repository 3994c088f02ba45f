#!/usr/bin/env bash
# Prometheus 3 under prometheus-operator on the running local cluster (hack/local-cluster), in
# namespace prom3, beside the host's Debian Prometheus 2.42, scraping the kubelet the way
# kube-prometheus-stack does (hack/local-cluster.d/prom3.yaml; docs/install.md, "Prometheus 3
# under prometheus-operator").
#
# Usage: hack/local-cluster.d/prom3.sh up|down|status
#
#   up      build (when absent) the operator, config-reloader and Prometheus 3 binaries from their
#           Go modules, build their images and import them into the cluster's containerd, install
#           the operator's CRDs (pinned with the operator), apply the operator, the Prometheus CR
#           and the monitors, and wait until Prometheus is ready and scrapes cAdvisor. Safe to
#           repeat: unchanged images are not re-imported, the objects are applied server-side.
#   down    delete namespace prom3, its ClusterRoles/Bindings, the kubelet Service and Endpoints
#           the operator wrote into kube-system, and the CRDs (KEEP_CRDS=1 keeps them).
#   status  print the Prometheus CR's conditions and the kubelet targets' health.
#
# From the host Prometheus 3 answers at http://${PROM3_CLUSTER_IP}:9090 (a fixed ClusterIP);
# from pods at http://prometheus.prom3.svc:9090, remote write at .../api/v1/write.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="${ROOT}/hack/local-cluster.d"
# shellcheck source=hack/local-cluster.d/lib.sh
source "${HERE}/lib.sh"
LOCALBIN="${LOCALBIN:-${ROOT}/bin}"
export LOCALBIN
export KUBECONFIG="${KUBECONFIG:-${KUBECONFIG_PATH}}"

# In the band of the service range that Kubernetes keeps for fixed addresses (the lowest 256 of
# a /16), beside the DNS Service's 10.96.0.10; "90" as in port 9090.
PROM3_CLUSTER_IP="${PROM3_CLUSTER_IP:-10.96.0.90}"
PROM3_URL="http://${PROM3_CLUSTER_IP}:9090"
NS=prom3
FIELD_MANAGER=perfexp-prom3
IMAGES="${LOCALBIN}/images/prom3"
MARKS="${STATE}/images"

k() { kubectl "$@"; }

# versions sets OPERATOR_DIR, OPERATOR_VERSION, PROMETHEUS_BIN and PROMETHEUS_VERSION, building
# the binaries when they are not in bin/ yet (minutes when cold; see the two scripts).
versions() {
  OPERATOR_DIR="$("${ROOT}/hack/prometheus-operator.sh")"
  OPERATOR_VERSION="$(basename "${OPERATOR_DIR}")"
  PROMETHEUS_BIN="$("${ROOT}/hack/prometheus3.sh")"
  PROMETHEUS_VERSION="$(basename "$(dirname "${PROMETHEUS_BIN}")")"
}

# render prints prom3.yaml with its placeholders filled in.
render() {
  sed -e "s|@OPERATOR_VERSION@|${OPERATOR_VERSION}|g" \
    -e "s|@PROMETHEUS_VERSION@|${PROMETHEUS_VERSION}|g" \
    -e "s|@CLUSTER_IP@|${PROM3_CLUSTER_IP}|g" \
    "${HERE}/prom3.yaml"
}

# image NAME REF ENTRYPOINT BIN:DST writes bin/images/prom3/NAME.tar with hack/images' tool
# (a docker-archive on an empty base, reproducible) unless it is newer than the binary and names
# REF, then imports it unless containerd already holds the same bytes. The tarballs stay out of
# bin/images/ itself, so `hack/local-cluster up` does not import them on every start.
image() {
  local name="$1" ref="$2" entry="$3" file="$4" tar="${IMAGES}/$1.tar" sum recorded
  recorded="$(tar -xOf "${tar}" manifest.json 2>/dev/null | jq -r '.[0].RepoTags[0] // empty' 2>/dev/null || true)"
  if [ ! "${tar}" -nt "${file%%:*}" ] || [ "${recorded}" != "${ref}" ]; then
    "${IMAGES}/.tool" -tag "${ref}" -out "${tar}" -entrypoint "${entry}" -user 65532 -file "${file}"
    log "built image ${ref} -> ${tar}"
  fi
  sum="$(sha256sum "${tar}" | cut -c1-64)"
  mkdir -p "${MARKS}"
  if [ "$(cat "${MARKS}/prom3-${name}.tar.sha256" 2>/dev/null)" = "${sum}" ] \
    && "${CTR[@]}" images ls -q "name==docker.io/${ref}" 2>/dev/null | grep -qx "docker.io/${ref}"; then
    return 0
  fi
  "${CTR[@]}" images import --platform linux/amd64 "${tar}" >/dev/null
  echo "${sum}" >"${MARKS}/prom3-${name}.tar.sha256"
  log "imported docker.io/${ref}"
}

images() {
  containerd_serving || die "the local cluster's containerd is not running: start the cluster first (make cluster-up)"
  mkdir -p "${IMAGES}"
  # The image writer of hack/images, built into our own directory so a concurrent
  # hack/images/build.sh never sees a half-written tool.
  (cd "${ROOT}/hack/images" && GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 go build -trimpath -o "${IMAGES}/.tool" .)
  # The paths are those of the upstream images: the operator starts the config reloader as
  # /bin/prometheus-config-reloader and Prometheus through the image's entrypoint.
  image prometheus-operator "perfexp/prometheus-operator:${OPERATOR_VERSION}" /bin/operator "${OPERATOR_DIR}/operator:/bin/operator"
  image prometheus-config-reloader "perfexp/prometheus-config-reloader:${OPERATOR_VERSION}" /bin/prometheus-config-reloader \
    "${OPERATOR_DIR}/prometheus-config-reloader:/bin/prometheus-config-reloader"
  image prometheus "perfexp/prometheus:${PROMETHEUS_VERSION}" /bin/prometheus "${PROMETHEUS_BIN}:/bin/prometheus"
}

crds() {
  local dir crd
  dir="$("${ROOT}/hack/prometheus-operator.sh" crds)"
  # Server-side: the CRDs are too large for client-side apply's last-applied annotation.
  k apply --server-side --force-conflicts --field-manager="${FIELD_MANAGER}" -f "${dir}" >/dev/null
  for crd in "${dir}"/*.yaml; do
    crd="$(basename "${crd}" .yaml)"
    crd="${crd#monitoring.coreos.com_}.monitoring.coreos.com"
    wait_for "CRD ${crd} to be established" 60 "" k wait --for condition=established "crd/${crd}" --timeout=10s
  done
  log "CRDs of prometheus-operator ${OPERATOR_VERSION} installed"
}

prometheus_available() {
  [ "$(k -n "${NS}" get prometheus prom3 -o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null)" = True ]
}

prometheus_ready() { curl -fsS --max-time 5 "${PROM3_URL}/-/ready" >/dev/null; }

# cadvisor_up is true when the kubelet's cAdvisor endpoint was scraped successfully.
cadvisor_up() {
  curl -fsS --max-time 5 "${PROM3_URL}/api/v1/query" \
    --data-urlencode 'query=up{job="kubelet",metrics_path="/metrics/cadvisor"} == 1' \
    | jq -e '.data.result | length > 0' >/dev/null
}

cmd_up() {
  local t0=${SECONDS} t
  versions
  log "prometheus-operator ${OPERATOR_VERSION} (${OPERATOR_DIR}), Prometheus ${PROMETHEUS_VERSION} (${PROMETHEUS_BIN}) [$((SECONDS - t0))s]"
  images
  log "images ready [$((SECONDS - t0))s]"
  crds
  t=${SECONDS}
  render | write_rendered
  apply_objects
  k -n "${NS}" rollout status deploy/prometheus-operator --timeout=180s
  wait_for "the Prometheus CR prom3 to be Available" 300 "" prometheus_available
  wait_for "Prometheus 3 at ${PROM3_URL} to be ready" 120 "" prometheus_ready
  wait_for "the kubelet cAdvisor target to be up" 180 "" cadvisor_up
  log "Prometheus ${PROMETHEUS_VERSION} under prometheus-operator ${OPERATOR_VERSION} is up: $((SECONDS - t))s after the apply, $((SECONDS - t0))s in all"
  cat <<EOF

  Prometheus 3:  ${PROM3_URL}   (from pods: http://prometheus.${NS}.svc:9090)
  remote write:  http://prometheus.${NS}.svc:9090/api/v1/write
  e2e against it: PERFEXP_E2E_PROMETHEUS=prom3 go test -tags e2e ...   (docs/install.md)
EOF
}

# apply_objects applies the rendered manifests server-side. A namespace's objects can be refused
# for a moment after it is created, so it retries for a minute and then shows the last error.
apply_objects() {
  local out i
  for ((i = 0; i < 30; i++)); do
    if out="$(k apply --server-side --force-conflicts --field-manager="${FIELD_MANAGER}" -f "${STATE}/prom3.yaml" 2>&1)"; then
      return 0
    fi
    sleep 2
  done
  printf '%s\n' "${out}" >&2
  die "applying ${STATE}/prom3.yaml failed"
}

# write_rendered keeps the applied manifests under the cluster's state directory, where they
# can be read back (kubectl diff -f) and where `hack/local-cluster down` removes them.
write_rendered() {
  local tmp
  tmp="$(mktemp "${STATE}/prom3.yaml.XXXX")"
  cat >"${tmp}"
  mv "${tmp}" "${STATE}/prom3.yaml"
}

cmd_down() {
  local t0=${SECONDS} dir
  # The Prometheus CR first, while the operator still runs to remove what it made for it.
  if k get crd prometheuses.monitoring.coreos.com >/dev/null 2>&1; then
    k -n "${NS}" delete prometheus --all --ignore-not-found --wait=true --timeout=120s
  fi
  # Everything else of prom3.yaml is in the namespace or one of these four cluster objects.
  k delete namespace "${NS}" --ignore-not-found --wait=true --timeout=180s
  k delete clusterrolebinding prom3-operator prom3-prometheus --ignore-not-found
  k delete clusterrole prom3-operator prom3-prometheus --ignore-not-found
  # What the operator's kubelet controller wrote into kube-system; only if it says it did.
  if [ "$(k -n kube-system get service kubelet -o jsonpath='{.metadata.labels.app\.kubernetes\.io/managed-by}' 2>/dev/null)" = prometheus-operator ]; then
    k -n kube-system delete service kubelet --ignore-not-found
    k -n kube-system delete endpoints kubelet --ignore-not-found 2>/dev/null || true
  fi
  if [ "${KEEP_CRDS:-}" != 1 ]; then
    dir="$("${ROOT}/hack/prometheus-operator.sh" crds)"
    k delete -f "${dir}" --ignore-not-found --wait=true --timeout=120s
  fi
  rm -f "${STATE}/prom3.yaml"
  log "prom3 removed ($((SECONDS - t0))s)"
}

cmd_status() {
  k -n "${NS}" get prometheus prom3 -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.message}{"\n"}{end}' || return 1
  curl -fsS --max-time 5 "${PROM3_URL}/api/v1/targets?state=active" \
    | jq -r '.data.activeTargets[] | "\(.labels.job) \(.labels.metrics_path // .scrapeUrl) \(.health) \(.lastError)"'
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *) die "usage: hack/local-cluster.d/prom3.sh up|down|status" ;;
esac
