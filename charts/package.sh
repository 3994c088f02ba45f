#!/usr/bin/env bash
# Packages charts/perfexp for a release: chart version and appVersion VERSION, the manager image
# pinned by the digest hack/images/release.sh wrote (DIST/perfexp-manager-VERSION.oci.tar.digest),
# the k6 runner too, and the CRDs as one YAML for the pre-upgrade apply (docs/install.md).
#
# Usage: HELM=bin/tools/helm-v3.21.4/helm charts/package.sh VERSION DIST
# The archive is repacked with fixed timestamps and owners (helm package stamps the current
# time), so the same sources give the same sha256.
set -euo pipefail

version="${1:?usage: charts/package.sh VERSION DIST}"
dist="${2:?usage: charts/package.sh VERSION DIST}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
helm="${HELM:?HELM: the helm binary}"
K6_VERSION="${K6_VERSION:-v1.8.1}"
MANAGER_REPO="${MANAGER_REPO:-perfexp/manager}"
K6_REPO="${K6_REPO:-perfexp/k6}"
dist="$(cd "${dist}" && pwd)"
manager_digest="$(cat "${dist}/perfexp-manager-${version}.oci.tar.digest")"
k6_digest="$(cat "${dist}/perfexp-k6-${K6_VERSION}.oci.tar.digest")"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

cp -r "${root}/charts/perfexp" "${work}/perfexp"
values="${work}/perfexp/values.yaml"
# The image block's first tag/digest lines and k6Image; each must match exactly once.
awk -v repo="${MANAGER_REPO}" -v tag="${version}" -v digest="${manager_digest}" \
  -v k6="${K6_REPO}:${K6_VERSION}@${k6_digest}" '
  /^image:/ { inimage = 1 }
  /^[^ #]/ && !/^image:/ { inimage = 0 }
  inimage && /^  repository: / { print "  repository: " repo; n++; next }
  inimage && /^  tag: / { print "  tag: \"" tag "\""; n++; next }
  inimage && /^  digest: / { print "  digest: \"" digest "\""; n++; next }
  /^k6Image: / { print "k6Image: " k6; n++; next }
  { print }
  END { if (n != 4) { print "package.sh: values.yaml changed shape (" n " of 4 lines replaced)" > "/dev/stderr"; exit 1 } }
' "${root}/charts/perfexp/values.yaml" >"${values}"

"${helm}" lint --strict "${work}/perfexp" >/dev/null
"${helm}" package "${work}/perfexp" --version "${version}" --app-version "${version}" -d "${work}/pkg" >/dev/null
mkdir "${work}/unpacked"
tar -xzmf "${work}/pkg/perfexp-${version}.tgz" -C "${work}/unpacked"
tar -C "${work}/unpacked" --sort=name --owner=0 --group=0 --numeric-owner --mtime=1970-01-01 \
  --mode='u+rwX,go+rX,go-w' -cf - perfexp | gzip -n >"${dist}/perfexp-${version}.tgz"

# One YAML with every CRD, in name order.
crds="${dist}/perfexp-crds-${version}.yaml"
: >"${crds}"
for f in $(ls "${root}/charts/perfexp/crds/"*.yaml | sort); do
  [ -s "${crds}" ] && echo "---" >>"${crds}"
  cat "${f}" >>"${crds}"
done

rendered="$("${helm}" template perfexp "${dist}/perfexp-${version}.tgz" -n perfexp-system)"
grep -q "image: \"${MANAGER_REPO}@${manager_digest}\"" <<<"${rendered}" || {
  echo "package.sh: the packaged chart does not pin ${MANAGER_REPO}@${manager_digest}" >&2
  exit 1
}
echo "${dist}/perfexp-${version}.tgz (${MANAGER_REPO}@${manager_digest})"
echo "${crds}"
