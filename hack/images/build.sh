#!/usr/bin/env bash
# Builds the local cluster's images from static binaries and imports them into the cluster's
# containerd. No registry and no Docker engine are involved: each binary is compiled with
# CGO_ENABLED=0, written into a docker-archive tarball on an empty base by hack/images (Go,
# go-containerregistry), and loaded with `ctr -n k8s.io images import`.
#
# Usage: hack/images/build.sh [--no-import] IMAGE...
#        hack/images/build.sh --import-cached
#
#   IMAGE: pause coredns k6 demo demo-next manager, or all (= k6 demo manager)
#   --no-import      only build the tarballs under bin/images/
#   --import-cached  import every tarball already under bin/images/ (used by local-cluster up)
#   --import-one TAR import one tarball (used by hack/images/platform.sh)
#
# Tarballs are reproducible and only rebuilt when their binary changed; an import is skipped
# when containerd already holds the same tarball. When the cluster's containerd is not running
# the tarballs are kept and `hack/local-cluster up` imports them.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=hack/local-cluster.d/lib.sh
source "${ROOT}/hack/local-cluster.d/lib.sh"
LOCALBIN="${LOCALBIN:-${ROOT}/bin}"
OUT="${LOCALBIN}/images"
BINS="${OUT}/bin"
TOOL="${OUT}/.tool/images"
MARKS="${STATE}/images"

K6_VERSION="${K6_VERSION:-v1.8.1}"
DEMO_TAG="${DEMO_TAG:-dev}"
DEMO_NEXT_TAG="${DEMO_NEXT_TAG:-next}"
MANAGER_IMG="${MANAGER_IMG:-perfexp/manager:dev}"

do_import=1
# No GOFLAGS from the caller (e.g. -mod=vendor) may leak into these modules, and no VCS stamp:
# it changes with every commit and would make every binary, and so every image, look new.
export GOFLAGS="-mod=mod -buildvcs=false"

# gobuild MODULE_DIR PACKAGE OUTPUT [GO BUILD FLAG...] replaces OUTPUT only when the new binary
# differs, so its modification time tells whether the image holding it must be rebuilt.
gobuild() {
  (cd "$1" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" "${@:4}" -o "$3.new" "$2")
  if cmp -s "$3.new" "$3"; then
    rm -f "$3.new"
  else
    mv "$3.new" "$3"
  fi
}

build_tool() {
  mkdir -p "$(dirname "${TOOL}")"
  gobuild "${ROOT}/hack/images" . "${TOOL}"
}

# mkimage NAME REF ENTRYPOINT USER BIN[:DST]... writes bin/images/NAME.tar unless it is newer
# than every binary it holds.
mkimage() {
  local name="$1" ref="$2" entry="$3" user="$4" tar="${OUT}/$1.tar" fresh=1 f src
  shift 4
  local files=()
  for f in "$@"; do
    src="${f%%:*}"
    [ "${tar}" -nt "${src}" ] || fresh=0
    files+=(-file "${f}")
  done
  if [ "${fresh}" = 1 ] && [ "$(tar_ref "${tar}")" = "${ref}" ]; then
    return 0
  fi
  "${TOOL}" -tag "${ref}" -out "${tar}" -entrypoint "${entry}" -user "${user}" "${files[@]}"
  log "built image ${ref} -> ${tar}"
}

# tar_ref TARBALL prints the image reference recorded in a docker-archive tarball.
tar_ref() {
  [ -f "$1" ] || return 0
  tar -xOf "$1" manifest.json 2>/dev/null | jq -r '.[0].RepoTags[0] // empty' 2>/dev/null || true
}

# import_tar TARBALL loads it into the cluster's containerd unless the same bytes are there.
import_tar() {
  local tar="$1" ref sum name
  [ "${do_import}" = 1 ] || return 0
  if ! containerd_serving; then
    log "the local cluster's containerd is not running: kept ${tar} for 'hack/local-cluster up' to import"
    return 0
  fi
  ref="$(tar_ref "${tar}")"
  [ -n "${ref}" ] || die "${tar} records no image reference"
  # containerd stores short Docker references under their fully qualified name.
  case "${ref}" in
    */*/*) name="${ref}" ;;
    */*) name="docker.io/${ref}" ;;
    *) name="docker.io/library/${ref}" ;;
  esac
  sum="$(sha256sum "${tar}" | cut -c1-64)"
  mkdir -p "${MARKS}"
  if [ "$(cat "${MARKS}/$(basename "${tar}").sha256" 2>/dev/null)" = "${sum}" ] \
    && "${CTR[@]}" images ls -q "name==${name}" 2>/dev/null | grep -qx "${name}"; then
    return 0
  fi
  "${CTR[@]}" images import --platform linux/amd64 "${tar}" >/dev/null
  echo "${sum}" >"${MARKS}/$(basename "${tar}").sha256"
  log "imported ${name}"
}

image_pause() {
  gobuild "${ROOT}/hack/images" ./pause "${BINS}/pause"
  # The sandbox runs as root like upstream's pause: it must be able to reap any child.
  mkimage pause "${PAUSE_IMAGE#docker.io/}" /pause "" "${BINS}/pause:/pause"
  import_tar "${OUT}/pause.tar"
}

image_coredns() {
  if [ ! -x "${BINS}/coredns" ] || [ -n "$(find "${ROOT}/hack/local-cluster.d/coredns" -newer "${BINS}/coredns" -type f)" ]; then
    log "building CoreDNS ${COREDNS_VERSION} (a few minutes when cold)"
  fi
  gobuild "${ROOT}/hack/local-cluster.d/coredns" . "${BINS}/coredns"
  mkimage coredns "perfexp/coredns:${COREDNS_VERSION}" /coredns 65532 "${BINS}/coredns:/coredns"
  import_tar "${OUT}/coredns.tar"
}

image_k6() {
  local k6
  k6="$("${ROOT}/hack/k6.sh")"
  mkimage k6 "perfexp/k6:${K6_VERSION}" /k6 65532 "${k6}:/k6"
  import_tar "${OUT}/k6.tar"
}

image_demo() {
  local svc
  for svc in circulation inventory kafka; do
    gobuild "${ROOT}/test/demoapp" "./cmd/${svc}" "${BINS}/demo-${svc}"
    mkimage "demo-${svc}" "perfexp/demo-${svc}:${DEMO_TAG}" "/${svc}" 65532 "${BINS}/demo-${svc}:/${svc}"
    import_tar "${OUT}/demo-${svc}.tar"
  done
}

# image_demo_next is the demo's "next release" for `make demo-bisect`: every service again under
# the tag DEMO_NEXT_TAG, built with the build tag slow. Only inventory's code reads that tag (a
# fixed delay per check-out and check-in, test/demoapp/cmd/inventory/release_slow.go): the other
# services' next images behave as their DEMO_TAG images do, only their names differ, as
# services that were rebuilt for a release without a change that matters.
image_demo_next() {
  local svc
  for svc in circulation inventory kafka; do
    gobuild "${ROOT}/test/demoapp" "./cmd/${svc}" "${BINS}/demo-${svc}-next" -tags slow
    mkimage "demo-${svc}-next" "perfexp/demo-${svc}:${DEMO_NEXT_TAG}" "/${svc}" 65532 "${BINS}/demo-${svc}-next:/${svc}"
    import_tar "${OUT}/demo-${svc}-next.tar"
  done
}

# image_manager tolerates a tree where the operator does not build yet: it says so and goes on,
# so the demo and the e2e harness stay usable while the operator is written.
image_manager() {
  if [ ! -d "${ROOT}/cmd/manager" ]; then
    log "SKIPPED operator image ${MANAGER_IMG}: ./cmd/manager does not exist yet"
    return 0
  fi
  # The main module is built with its go.mod as committed (never -mod=mod, which could edit it).
  if ! GOFLAGS="-buildvcs=false" gobuild "${ROOT}" ./cmd/manager "${BINS}/manager"; then
    log "SKIPPED operator image ${MANAGER_IMG}: ./cmd/manager does not compile (see the errors above)"
    return 0
  fi
  mkimage manager "${MANAGER_IMG}" /manager 65532 "${BINS}/manager:/manager"
  import_tar "${OUT}/manager.tar"
}

main() {
  local images=() i
  while [ $# -gt 0 ]; do
    case "$1" in
      --no-import) do_import=0 ;;
      --import-one)
        import_tar "$2"
        return 0
        ;;
      --import-cached)
        for i in "${OUT}"/*.tar; do
          [ -f "${i}" ] && import_tar "${i}"
        done
        return 0
        ;;
      all) images+=(k6 demo manager) ;;
      pause | coredns | k6 | demo | manager) images+=("$1") ;;
      demo-next) images+=(demo_next) ;;
      *) die "unknown image '$1' (want pause, coredns, k6, demo, demo-next, manager or all)" ;;
    esac
    shift
  done
  [ ${#images[@]} -gt 0 ] || die "usage: hack/images/build.sh [--no-import] IMAGE... | --import-cached"
  mkdir -p "${BINS}"
  build_tool
  for i in "${images[@]}"; do
    "image_${i}"
  done
}

main "$@"
