#!/usr/bin/env bash
# Provides an etcd binary for envtest in the given directory. etcd cannot be downloaded as a
# release here, so it comes from Debian's etcd-server package (3.4, which kube-apiserver 1.36
# still speaks to). Any service the package starts is left alone: envtest starts its own etcd
# on free ports.
set -euo pipefail
dest="${1:?usage: hack/etcd.sh DIR}"
mkdir -p "${dest}"
if ! command -v etcd >/dev/null 2>&1 && [ ! -x /usr/bin/etcd ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends etcd-server >&2 || { apt-get update >&2 && apt-get install -y --no-install-recommends etcd-server >&2; }
fi
ln -sf "$(command -v etcd || echo /usr/bin/etcd)" "${dest}/etcd"
