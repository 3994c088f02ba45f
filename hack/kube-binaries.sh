#!/usr/bin/env bash
# Builds Kubernetes server binaries from the k8s.io/kubernetes Go module and caches them under
# bin/k8s/<version>/. Upstream release tarballs cannot be downloaded on our build machines, but
# the Go module proxy serves the source, so we compile it in a throw-away module that pins every
# staging module (k8s.io/api, k8s.io/client-go, ...) to the matching v0.x.y tag.
#
# Usage: hack/kube-binaries.sh [binary...]   (default: kube-apiserver)
# Prints the directory holding the binaries.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.36.3}"
STAGING_VERSION="v0${KUBE_VERSION#v1}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${ROOT}/bin/k8s/${KUBE_VERSION}"
WORK="${ROOT}/bin/.kube-build/${KUBE_VERSION}"

bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(kube-apiserver)

declare -A pkg=(
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
  [kubelet]=k8s.io/kubernetes/cmd/kubelet
  [kube-proxy]=k8s.io/kubernetes/cmd/kube-proxy
)

missing=()
for b in "${bins[@]}"; do
  [ -n "${pkg[$b]:-}" ] || { echo "unknown binary: $b" >&2; exit 2; }
  [ -x "${OUT}/${b}" ] || missing+=("$b")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "${OUT}"
  exit 0
fi

mkdir -p "${WORK}" "${OUT}"
cd "${WORK}"
if [ ! -f go.mod ]; then
  {
    echo "module perfexp.dev/kube-build"
    echo
    echo "go 1.26.0"
    echo
    echo "require k8s.io/kubernetes ${KUBE_VERSION}"
  } >go.mod
  # The staging list is read from the release's own go.mod so a version bump needs no edit here.
  modfile="$(mktemp)"
  GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@${KUBE_VERSION}" >"${modfile}"
  gomod="$(sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' "${modfile}")"
  rm -f "${modfile}"
  grep -E '=> \./staging/' "${gomod}" | awk '{print $1}' | sort -u | while read -r m; do
    echo "replace ${m} => ${m} ${STAGING_VERSION}" >>go.mod
  done
  {
    printf '//go:build tools\n\npackage main\n\n'
    for b in "${!pkg[@]}"; do printf 'import _ "%s"\n' "${pkg[$b]}"; done
  } >tools.go
  GOFLAGS=-mod=mod go mod tidy >&2
fi

for b in "${missing[@]}"; do
  echo "building ${b} ${KUBE_VERSION} (a few minutes when cold)..." >&2
  CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w \
    -X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} \
    -X k8s.io/component-base/version.gitMajor=1 \
    -X k8s.io/component-base/version.gitMinor=$(echo "${KUBE_VERSION}" | cut -d. -f2)" \
    -o "${OUT}/${b}.tmp" "${pkg[$b]}" >&2
  mv "${OUT}/${b}.tmp" "${OUT}/${b}"
done
echo "${OUT}"
