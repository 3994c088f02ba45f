#!/usr/bin/env bash
# Builds a static Prometheus 3 into bin/prometheus3/<version>/prometheus (or under $LOCALBIN) from
# the github.com/prometheus/prometheus Go module, so the analysis queries can be tested against the
# Prometheus that kube-prometheus-stack runs as well as against Debian's 2.42 (docs/install.md,
# "Prometheus versions"). Only Go is needed: release tarballs cannot be downloaded on our build
# machines.
#
# The module is versioned v0.3MM.P for Prometheus 3.MM.P and its go.mod has no replace
# directives, so a plain `go install pkg@version` works (no throw-away module is needed).
#
# Usage: hack/prometheus3.sh        Prints the path of the binary; builds it only when absent.
set -euo pipefail

# Prometheus 3.16.0, the newest release when this was pinned. Override to test another 3.x.
PROMETHEUS3_MODULE_VERSION="${PROMETHEUS3_MODULE_VERSION:-v0.316.0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCALBIN="${LOCALBIN:-${ROOT}/bin}"

# v0.316.0 -> 3.16.0: the version the binary reports, as Prometheus' own release build sets it.
minor_patch="${PROMETHEUS3_MODULE_VERSION#v0.3}"
version="3.$((10#${minor_patch%%.*})).${minor_patch#*.}"
OUT_DIR="${LOCALBIN}/prometheus3/v${version}"
OUT="${OUT_DIR}/prometheus"

# A cached binary is reused only when it is the pinned module version and really static
# (`go version -m` reads what the build embedded).
if [ -x "${OUT}" ] && go version -m "${OUT}" 2>/dev/null | grep -q "mod[[:space:]]*github.com/prometheus/prometheus[[:space:]]*${PROMETHEUS3_MODULE_VERSION}" \
  && go version -m "${OUT}" | grep -q 'CGO_ENABLED=0'; then
  echo "${OUT}"
  exit 0
fi

mkdir -p "${OUT_DIR}"
echo "building prometheus ${version} (${PROMETHEUS3_MODULE_VERSION}); 10 minutes or more on 2 cores when cold..." >&2
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

# Build tags: remove_all_sd drops the cloud service discoveries (AWS, Azure, GCE, ... SDKs make up
# most of the build time); enable_kubernetes_sd keeps the one prometheus-operator configures.
# Static and file discovery are always built in. The web UI's assets are not embedded (that needs
# the builtinassets tag and a Node build): the HTTP API, which is all perfexp uses, works without.
# The -X flags are those of Prometheus' .promu.yml, so `prometheus --version` names the release
# (the tests read it to choose the 3.x flags).
ldflags="-s -w -X github.com/prometheus/common/version.Version=${version}"
ldflags+=" -X github.com/prometheus/common/version.Revision=${PROMETHEUS3_MODULE_VERSION}"
ldflags+=" -X github.com/prometheus/common/version.Branch=module"
ldflags+=" -X github.com/prometheus/common/version.BuildUser=perfexp-hack"
# GOFLAGS is cleared so a caller's -mod=vendor or similar cannot leak into a module-mode install.
GOFLAGS="" GOBIN="${tmp}" CGO_ENABLED=0 go install -trimpath -tags remove_all_sd,enable_kubernetes_sd \
  -ldflags "${ldflags}" "github.com/prometheus/prometheus/cmd/prometheus@${PROMETHEUS3_MODULE_VERSION}" >&2
mv "${tmp}/prometheus" "${OUT}"
echo "${OUT}"
