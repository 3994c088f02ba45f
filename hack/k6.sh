#!/usr/bin/env bash
# Builds a static k6 into bin/ (or $LOCALBIN). k6 is built from its Go module because release
# tarballs cannot be downloaded on our build machines; CGO is off so the binary runs in an image
# with no libc (a plain `go install` links against glibc and fails there with "no such file").
#
# Usage: hack/k6.sh        Prints the path of the binary.
set -euo pipefail

K6_VERSION="${K6_VERSION:-v1.8.1}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCALBIN="${LOCALBIN:-${ROOT}/bin}"
OUT="${LOCALBIN}/k6"

# `go version -m` reads the module version and build settings embedded in the binary, so a
# cached binary is reused only when it is the pinned version and really static.
if [ -x "${OUT}" ] && go version -m "${OUT}" 2>/dev/null | grep -q "mod[[:space:]]*go.k6.io/k6[[:space:]]*${K6_VERSION}" \
  && go version -m "${OUT}" | grep -q 'CGO_ENABLED=0'; then
  echo "${OUT}"
  exit 0
fi

mkdir -p "${LOCALBIN}"
echo "building k6 ${K6_VERSION} (about 2 minutes when cold)..." >&2
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
# GOFLAGS is cleared so a caller's -mod=vendor or similar cannot leak into a module-mode install.
GOFLAGS="" GOBIN="${tmp}" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "go.k6.io/k6@${K6_VERSION}" >&2
mv "${tmp}/k6" "${OUT}"
echo "${OUT}"
