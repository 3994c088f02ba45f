#!/usr/bin/env bash
# Builds node_exporter into bin/ (or $LOCALBIN) from its Go module, pinned like k6 (hack/k6.sh):
# the local cluster runs it on the host so a report's node load sees the whole machine,
# processes outside the cluster included (docs/local-cluster.md). CGO is off: a static binary
# needs nothing from the host.
#
# Usage: hack/node-exporter.sh        Prints the path of the binary.
set -euo pipefail

NODE_EXPORTER_VERSION="${NODE_EXPORTER_VERSION:-v1.12.1}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCALBIN="${LOCALBIN:-${ROOT}/bin}"
OUT="${LOCALBIN}/node_exporter"

# The module version embedded in the binary decides whether a cached one is reused.
if [ -x "${OUT}" ] && go version -m "${OUT}" 2>/dev/null | grep -q "mod[[:space:]]*github.com/prometheus/node_exporter[[:space:]]*${NODE_EXPORTER_VERSION}"; then
  echo "${OUT}"
  exit 0
fi

mkdir -p "${LOCALBIN}"
echo "building node_exporter ${NODE_EXPORTER_VERSION} (about a minute when cold)..." >&2
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
# GOFLAGS is cleared so a caller's -mod=vendor or similar cannot leak into a module-mode install.
GOFLAGS="" GOBIN="${tmp}" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "github.com/prometheus/node_exporter@${NODE_EXPORTER_VERSION}" >&2
mv "${tmp}/node_exporter" "${OUT}"
echo "${OUT}"
