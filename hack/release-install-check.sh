#!/usr/bin/env bash
# Installs a release from dist/ alone onto the local cluster and runs one experiment with it, as
# a user would from the published artifacts (docs/release.md): the image archives imported into
# the node's containerd, the CRDs applied from their file, the packaged chart installed in its
# namespaced scope (its own namespace, watching one namespace of its own, so the cluster's
# other experiments are not touched), `helm test`, the plugin taken from its archive, and one
# experiment followed to its end with `kubectl perfexp watch`. Everything but the CRDs and the
# imported images is removed at the end.
#
# Usage: HELM=bin/tools/helm-v3.21.4/helm KUBECONFIG=... hack/release-install-check.sh VERSION DIST
# Run `make release-check` first (make release-install-check does).
set -euo pipefail

version="${1:?usage: hack/release-install-check.sh VERSION DIST}"
dist="${2:?usage: hack/release-install-check.sh VERSION DIST}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/local-cluster.d/lib.sh
source "${root}/hack/local-cluster.d/lib.sh"
export KUBECONFIG="${KUBECONFIG:-${KUBECONFIG_PATH}}"
helm="${HELM:?HELM: the helm binary}"
K6_VERSION="${K6_VERSION:-v1.8.1}"
PROMETHEUS_URL="${PROMETHEUS_URL:-http://10.244.0.1:9090}"
dist="$(cd "${dist}" && pwd)"
release=perfexp-release
ns=perfexp-release-system
target=perfexp-release
work="$(mktemp -d)"

# A cluster-wide operator already running (make demo's, in perfexp-system) would reconcile the
# experiment too and refuse it (its namespace has no opt-in label): it is scaled to zero for the
# check and back at the end.
cluster_wide_replicas=""
cleanup() {
  "${helm}" uninstall "${release}" -n "${ns}" --wait >/dev/null 2>&1 || true
  kubectl delete namespace "${ns}" "${target}" --wait=false --ignore-not-found >/dev/null 2>&1 || true
  if [[ -n "${cluster_wide_replicas}" ]]; then
    kubectl -n perfexp-system scale deployment perfexp-manager --replicas="${cluster_wide_replicas}" >/dev/null 2>&1 || true
  fi
  rm -rf "${work}"
}
trap cleanup EXIT
step() { echo "== $* ($(date -u +%H:%M:%S))"; }

if kubectl -n perfexp-system get deployment perfexp-manager >/dev/null 2>&1; then
  cluster_wide_replicas="$(kubectl -n perfexp-system get deployment perfexp-manager -o jsonpath='{.spec.replicas}')"
  step "scale the cluster-wide operator in perfexp-system to 0 (back to ${cluster_wide_replicas} at the end)"
  kubectl -n perfexp-system scale deployment perfexp-manager --replicas=0
fi

step "import the image archives into the node's containerd"
# The chart pins both images by digest (repo@sha256:...), but an import names an image by its
# tag only; the kubelet looks the digest reference up, finds nothing and tries the registry
# (ImagePullBackOff). Each image is therefore also named by its digest, as a pull would name it.
for archive in "perfexp-manager-${version}.oci.tar" "perfexp-k6-${K6_VERSION}.oci.tar"; do
  "${CTR[@]}" images import --all-platforms "${dist}/${archive}" | tee "${work}/import.txt"
  # "unpacking docker.io/perfexp/manager:0.3.0 (sha256:...)...done"
  sed -n 's/^unpacking \([^ ]*\) (\(sha256:[0-9a-f]*\)).*/\1 \2/p' "${work}/import.txt" | while read -r name digest; do
    "${CTR[@]}" images tag --force "${name}" "${name%:*}@${digest}" >/dev/null
    echo "named ${name%:*}@${digest}"
  done
done

step "apply the CRDs from perfexp-crds-${version}.yaml"
kubectl apply --server-side --force-conflicts -f "${dist}/perfexp-crds-${version}.yaml"

step "helm install ${dist}/perfexp-${version}.tgz, namespaced, watching ${target}"
kubectl create namespace "${target}" --dry-run=client -o yaml | kubectl apply -f -
start=$(date +%s)
"${helm}" install "${release}" "${dist}/perfexp-${version}.tgz" -n "${ns}" --create-namespace --wait --timeout 5m \
  --set scope=namespaced --set "watchNamespaces={${target}}" --set prometheusURL="${PROMETHEUS_URL}"
echo "helm install took $(($(date +%s) - start)) s"
kubectl -n "${ns}" get deployment "${release}-manager" -o jsonpath='{.spec.template.spec.containers[0].image}{"\n"}'
"${helm}" test "${release}" -n "${ns}" --logs --timeout 3m

step "the plugin from kubectl-perfexp_v${version}_linux_amd64.tar.gz"
mkdir -p "${work}/bin"
tar -xzf "${dist}/kubectl-perfexp_v${version}_linux_amd64.tar.gz" -C "${work}/bin"
export PATH="${work}/bin:${PATH}"
kubectl perfexp version

step "one experiment in ${target}"
kubectl apply -f - <<EOF
apiVersion: perfexp.dev/v1alpha1
kind: PerfExperiment
metadata:
  name: release-smoke
  namespace: ${target}
spec:
  load:
    scenarios:
      - name: health
        script:
          inline: |
            import http from 'k6/http';
            import { sleep } from 'k6';
            export default function () { http.get('${PROMETHEUS_URL}/-/healthy'); sleep(0.1); }
        vus: 2
        duration: 20s
EOF
start=$(date +%s)
# Results must be measured requests: a run whose results are Invalid fails the check.
kubectl perfexp watch release-smoke -n "${target}" --timeout 10m --fail-on fail,invalid
echo "the experiment ended Succeeded after $(($(date +%s) - start)) s"
kubectl perfexp report release-smoke -n "${target}" | head -n 40
echo "release-install-check: ${version} installs from ${dist} and runs an experiment"
