#!/usr/bin/env bash
# Runs the platform's seed Job (test/platform/setup-job.yaml) and waits for it.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
K=(kubectl --kubeconfig "${LOCAL_KUBECONFIG:-/var/lib/perfexp-local/kubeconfig}" -n "${PLATFORM_NS:-perfexp-platform}")
"${K[@]}" delete --ignore-not-found job platform-seed >/dev/null
"${K[@]}" apply -f "${HERE}/setup-job.yaml" >/dev/null
if ! "${K[@]}" wait --for=condition=complete --timeout=300s job/platform-seed; then
  "${K[@]}" logs job/platform-seed --tail=20 || true
  exit 1
fi
"${K[@]}" logs job/platform-seed --tail=9
