#!/usr/bin/env bash
# Checks a release's dist/ as a maintainer would before publishing it (docs/release.md), from
# the files alone:
#   - SHA256SUMS lists every file and every sum matches;
#   - each OCI archive is one image index with the digest of its .digest file, every blob hashes
#     to its descriptor, every platform is there (hack/images `images verify`);
#   - the chart packages the release's version, lints with --strict (cluster and namespaced
#     scope), and renders the manager and k6 images pinned by those digests;
#   - the CRDs file holds every CRD of the chart;
#   - the krew manifest has the release's version, no placeholder, and each platform's sha256
#     is its archive's; each plugin archive holds the plugin, its completion helper and LICENSE.
#
# Usage: HELM=bin/tools/helm-v3.21.4/helm hack/release-check.sh VERSION DIST
# PLATFORMS (default linux/amd64 linux/arm64) are the image platforms required; PLUGIN_PLATFORMS
# (default the six of plugins/release.sh) the plugin archives required.
set -euo pipefail

version="${1:?usage: hack/release-check.sh VERSION DIST}"
dist="${2:?usage: hack/release-check.sh VERSION DIST}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
helm="${HELM:?HELM: the helm binary}"
K6_VERSION="${K6_VERSION:-v1.8.1}"
MANAGER_REPO="${MANAGER_REPO:-perfexp/manager}"
K6_REPO="${K6_REPO:-perfexp/k6}"
PLATFORMS="${PLATFORMS:-linux/amd64 linux/arm64}"
PLUGIN_PLATFORMS="${PLUGIN_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}"
dist="$(cd "${dist}" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

failed=0
fail() {
  echo "FAIL  $*" >&2
  failed=1
}
ok() { echo "ok    $*"; }

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# 1. Checksums: every file listed, every sum right.
if [ ! -f "${dist}/SHA256SUMS" ]; then
  fail "no SHA256SUMS in ${dist}"
else
  if (cd "${dist}" && sha256sum --quiet -c SHA256SUMS >"${work}/sums.txt" 2>&1); then
    ok "SHA256SUMS: $(wc -l <"${dist}/SHA256SUMS") files match"
  else
    fail "SHA256SUMS: $(cat "${work}/sums.txt")"
  fi
  for f in "${dist}"/*; do
    base="$(basename "${f}")"
    [ "${base}" = SHA256SUMS ] && continue
    grep -q "  ${base}\$" "${dist}/SHA256SUMS" || fail "SHA256SUMS does not list ${base}"
  done
fi

# 2. Images.
(cd "${root}/hack/images" && GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 go build -o "${work}/images" .)
image_platforms="$(tr ' ' ',' <<<"${PLATFORMS}")"
for archive in "perfexp-manager-${version}.oci.tar" "perfexp-k6-${K6_VERSION}.oci.tar"; do
  if out="$("${work}/images" verify -archive "${dist}/${archive}" -digest-file "${dist}/${archive}.digest" \
    -platforms "${image_platforms}" 2>&1)"; then
    ok "${out}"
  else
    fail "${out}"
  fi
done
manager_digest="$(cat "${dist}/perfexp-manager-${version}.oci.tar.digest" 2>/dev/null || true)"
k6_digest="$(cat "${dist}/perfexp-k6-${K6_VERSION}.oci.tar.digest" 2>/dev/null || true)"

# 3. The chart.
chart="${dist}/perfexp-${version}.tgz"
if [ ! -f "${chart}" ]; then
  fail "no chart ${chart}"
else
  meta="$("${helm}" show chart "${chart}")"
  grep -qx "version: ${version}" <<<"${meta}" || fail "chart version is not ${version}: ${meta}"
  grep -Eqx "appVersion: \"?${version}\"?" <<<"${meta}" || fail "chart appVersion is not ${version}"
  if "${helm}" lint --strict "${chart}" >"${work}/lint.txt" 2>&1 &&
    "${helm}" lint --strict "${chart}" --set scope=namespaced --set 'watchNamespaces={team-a}' >>"${work}/lint.txt" 2>&1; then
    ok "chart perfexp-${version}: helm lint --strict (cluster and namespaced scope)"
  else
    fail "helm lint: $(cat "${work}/lint.txt")"
  fi
  rendered="$("${helm}" template perfexp "${chart}" -n perfexp-system)"
  if grep -q "image: \"${MANAGER_REPO}@${manager_digest}\"" <<<"${rendered}" &&
    grep -q -- "--k6-image=${K6_REPO}:${K6_VERSION}@${k6_digest}" <<<"${rendered}"; then
    ok "chart pins ${MANAGER_REPO}@${manager_digest} and ${K6_REPO}:${K6_VERSION}@${k6_digest}"
  else
    fail "the chart does not pin the archives' digests (${MANAGER_REPO}@${manager_digest}, k6 ${k6_digest})"
  fi
  # 4. The CRDs file holds the chart's CRDs.
  in_chart="$(tar -tzf "${chart}" | grep -c '^perfexp/crds/.*\.yaml$' || true)"
  in_file="$(grep -c '^kind: CustomResourceDefinition$' "${dist}/perfexp-crds-${version}.yaml" 2>/dev/null || true)"
  if [ "${in_chart}" -gt 0 ] && [ "${in_chart}" = "${in_file}" ]; then
    ok "perfexp-crds-${version}.yaml: ${in_file} CRDs, as in the chart"
  else
    fail "perfexp-crds-${version}.yaml holds ${in_file:-0} CRDs, the chart ${in_chart}"
  fi
fi

# 5. The krew manifest and the plugin archives.
krew="${dist}/perfexp.yaml"
if [ ! -f "${krew}" ]; then
  fail "no krew manifest ${krew}"
else
  grep -Eq 'SHA256_|v0\.0\.0' "${krew}" && fail "perfexp.yaml still has placeholders: $(grep -En 'SHA256_|v0\.0\.0' "${krew}" | head -3)"
  grep -q "^  version: v${version}\$" "${krew}" || fail "perfexp.yaml's spec.version is not v${version}"
  # Each uri line is followed by its sha256 line.
  while read -r uri sum; do
    archive="${dist}/${uri##*/}"
    if [ ! -f "${archive}" ]; then
      fail "perfexp.yaml names ${uri##*/}, which is not in dist/"
    elif [ "$(sha256 "${archive}")" != "${sum}" ]; then
      fail "perfexp.yaml's sha256 for ${uri##*/} is ${sum}, the file's $(sha256 "${archive}")"
    fi
  done < <(awk '/^ *uri: / { uri = $2 } /^ *sha256: / { print uri, $2 }' "${krew}")
  for platform in ${PLUGIN_PLATFORMS}; do
    os="${platform%/*}" arch="${platform#*/}"
    archive="kubectl-perfexp_v${version}_${os}_${arch}.tar.gz"
    bin=kubectl-perfexp complete=kubectl_complete-perfexp
    if [ "${os}" = windows ]; then bin=kubectl-perfexp.exe complete=kubectl_complete-perfexp.bat; fi
    if [ ! -f "${dist}/${archive}" ]; then
      fail "no plugin archive ${archive}"
      continue
    fi
    grep -q "/${archive}\$" "${krew}" || fail "perfexp.yaml does not name ${archive}"
    listing="$(tar -tzf "${dist}/${archive}" | sort | tr '\n' ' ')"
    expected="$(printf '%s\n' "${bin}" "${complete}" LICENSE | sort | tr '\n' ' ')"
    [ "${listing}" = "${expected}" ] || fail "${archive} holds ${listing}, want ${expected}"
  done
  [ "${failed}" = 0 ] && ok "perfexp.yaml: v${version}, $(grep -c '^ *sha256: ' "${krew}") platforms, sums match their archives"
fi

if [ "${failed}" != 0 ]; then
  echo "release-check: ${dist} is not ready to publish" >&2
  exit 1
fi
echo "release-check: ${dist} for ${version} is ready to publish:"
(cd "${dist}" && ls -l | tail -n +2 | awk '{printf "  %10d  %s\n", $5, $9}')
