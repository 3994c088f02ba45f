#!/usr/bin/env bash
# Builds a release's images as OCI archives, each an image index over linux/amd64 and
# linux/arm64 (`images oci`, oci.go): the manager from ./cmd/manager and the k6 runner from k6's
# module at K6_VERSION. Static binaries (CGO off, -trimpath, no VCS stamp) and fixed timestamps
# make the digests depend on the sources only.
#
# Usage: hack/images/release.sh VERSION DIST
#   writes DIST/perfexp-manager-VERSION.oci.tar, DIST/perfexp-k6-K6_VERSION.oci.tar and, next
#   to each, a .digest file with the index's digest (what the chart pins), and DIST/images.txt
#   with every image's index and per-platform digests.
set -euo pipefail

version="${1:?usage: hack/images/release.sh VERSION DIST}"
dist="${2:?usage: hack/images/release.sh VERSION DIST}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
K6_VERSION="${K6_VERSION:-v1.8.1}"
MANAGER_REPO="${MANAGER_REPO:-perfexp/manager}"
K6_REPO="${K6_REPO:-perfexp/k6}"
ARCHES="${ARCHES:-amd64 arm64}"
mkdir -p "${dist}"
dist="$(cd "${dist}" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

(cd "${ROOT}/hack/images" && GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 go build -o "${work}/images" .)

manager_platforms=() k6_platforms=()
for arch in ${ARCHES}; do
  echo "building manager and k6 ${K6_VERSION} for linux/${arch}" >&2
  (cd "${ROOT}" && CGO_ENABLED=0 GOOS=linux GOARCH="${arch}" GOFLAGS="-buildvcs=false" \
    go build -trimpath -ldflags "-s -w" -o "${work}/manager-${arch}" ./cmd/manager)
  # go install refuses GOBIN for another platform; a throw-away GOPATH keeps the shared module
  # cache and receives the binary under bin/linux_<arch>/ (or bin/ for the host's platform).
  GOFLAGS="" GOPATH="${work}/gopath-${arch}" GOMODCACHE="$(go env GOMODCACHE)" CGO_ENABLED=0 \
    GOOS=linux GOARCH="${arch}" go install -trimpath -ldflags "-s -w" "go.k6.io/k6@${K6_VERSION}"
  k6="$(find "${work}/gopath-${arch}/bin" -name k6 -type f | head -n1)"
  manager_platforms+=(-platform "linux/${arch}=${work}/manager-${arch}")
  k6_platforms+=(-platform "linux/${arch}=${k6}")
done

# images.txt lists each image with its index's digest and each platform's manifest digest.
images="${dist}/images.txt"
: >"${images}"
oci() {
  local ref="$1" archive="$2"
  shift 2
  echo "${ref}" >>"${images}"
  "${work}/images" oci -tag "${ref}" -out "${dist}/${archive}" -digest-file "${dist}/${archive}.digest" "$@" \
    | sed 's/^/  /' | tee -a "${images}"
}
oci "${MANAGER_REPO}:${version}" "perfexp-manager-${version}.oci.tar" -entrypoint /manager -dst /manager "${manager_platforms[@]}"
oci "${K6_REPO}:${K6_VERSION}" "perfexp-k6-${K6_VERSION}.oci.tar" -entrypoint /k6 -dst /k6 "${k6_platforms[@]}"
