#!/usr/bin/env bash
# Installs what the integration and analysis tests start for real: etcd (for envtest's
# kube-apiserver) and Prometheus, both from Debian. The kube-apiserver itself is built by
# hack/kube-binaries.sh and k6 by hack/k6.sh; the Makefile calls those.
set -euo pipefail
need=()
command -v etcd >/dev/null 2>&1 || [ -x /usr/bin/etcd ] || need+=(etcd-server)
command -v prometheus >/dev/null 2>&1 || [ -x /usr/bin/prometheus ] || need+=(prometheus)
command -v promtool >/dev/null 2>&1 || [ -x /usr/bin/promtool ] || need+=(prometheus)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  # Debian's packages start their own services where an init system runs; the tests start
  # private instances on free ports and never use those.
  apt-get install -y --no-install-recommends "${need[@]}" >&2 \
    || { apt-get update >&2 && apt-get install -y --no-install-recommends "${need[@]}" >&2; }
fi
