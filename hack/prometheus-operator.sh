#!/usr/bin/env bash
# Builds static prometheus-operator and prometheus-config-reloader binaries into
# bin/prometheus-operator/v<version>/{operator,prometheus-config-reloader} (or under $LOCALBIN) from
# the github.com/prometheus-operator/prometheus-operator Go module, so the local cluster can run
# Prometheus 3 the way kube-prometheus-stack does (hack/local-cluster.d/prom3.sh, docs/install.md
# "Prometheus 3 under prometheus-operator"). Only Go is needed: no image registry is reachable here.
#
# The module's go.mod replaces its two submodules (pkg/apis/monitoring, pkg/client) with local
# directories, and `go install pkg@version` refuses a module with replace directives. So the
# binaries are built in a throw-away module that requires the operator and its submodules at the
# same pinned tag; minimal version selection then keeps every other dependency at the version
# the operator's own go.mod asks for.
#
# Usage: hack/prometheus-operator.sh            Prints the output directory; builds only what is absent.
#        hack/prometheus-operator.sh crds       Prints the directory of the pinned CRD manifests.
set -euo pipefail

# prometheus-operator v0.85.0 (2025-08-21), the newest version the module proxy offers here
# (kube-prometheus-stack 77.0.0 ships it); newer charts ship newer operators with the same CRDs
# for everything used here.
PROMETHEUS_OPERATOR_VERSION="${PROMETHEUS_OPERATOR_VERSION:-v0.85.0}"
MODULE=github.com/prometheus-operator/prometheus-operator
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCALBIN="${LOCALBIN:-${ROOT}/bin}"
OUT_DIR="${LOCALBIN}/prometheus-operator/${PROMETHEUS_OPERATOR_VERSION}"

# No caller's GOFLAGS (-mod=vendor and the like) may leak into the throw-away module.
export GOFLAGS="-mod=mod -buildvcs=false"

if [ "${1:-}" = crds ]; then
  dir="$(go mod download -json "${MODULE}@${PROMETHEUS_OPERATOR_VERSION}" | jq -r .Dir)"
  echo "${dir}/example/prometheus-operator-crd"
  exit 0
fi

# cached BIN is true when BIN was built from the pinned module version and is static.
cached() {
  [ -x "$1" ] && go version -m "$1" 2>/dev/null | grep -Eq "^[[:space:]]*(mod|dep)[[:space:]]+${MODULE}[[:space:]]+${PROMETHEUS_OPERATOR_VERSION}[[:space:]]" \
    && go version -m "$1" | grep -q 'CGO_ENABLED=0'
}

if cached "${OUT_DIR}/operator" && cached "${OUT_DIR}/prometheus-config-reloader"; then
  echo "${OUT_DIR}"
  exit 0
fi

mkdir -p "${OUT_DIR}"
echo "building prometheus-operator ${PROMETHEUS_OPERATOR_VERSION}; several minutes on 2 cores when cold..." >&2
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
cd "${tmp}"
go mod init perfexp.local/prometheus-operator-build >/dev/null 2>&1
# The submodules carry their own tags at the same version as the operator.
go mod edit \
  -require="${MODULE}@${PROMETHEUS_OPERATOR_VERSION}" \
  -require="${MODULE}/pkg/apis/monitoring@${PROMETHEUS_OPERATOR_VERSION}" \
  -require="${MODULE}/pkg/client@${PROMETHEUS_OPERATOR_VERSION}"
# A blank-import file makes `go mod tidy` record every package the two commands need.
cat >tools.go <<EOF
//go:build tools

package tools

import (
	_ "${MODULE}/cmd/operator"
	_ "${MODULE}/cmd/prometheus-config-reloader"
)
EOF
go mod tidy -e >&2

# The -X flags mirror the operator's Makefile, so `operator --version` names the release (the
# operator also uses its own version to label what it manages).
v="${PROMETHEUS_OPERATOR_VERSION#v}"
ldflags="-s -w -X github.com/prometheus/common/version.Version=${v}"
ldflags+=" -X github.com/prometheus/common/version.Revision=${PROMETHEUS_OPERATOR_VERSION}"
ldflags+=" -X github.com/prometheus/common/version.Branch=module"
ldflags+=" -X github.com/prometheus/common/version.BuildUser=perfexp-hack"
CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${tmp}/operator" "${MODULE}/cmd/operator" >&2
CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${tmp}/prometheus-config-reloader" "${MODULE}/cmd/prometheus-config-reloader" >&2
mv "${tmp}/operator" "${tmp}/prometheus-config-reloader" "${OUT_DIR}/"
echo "${OUT_DIR}"
