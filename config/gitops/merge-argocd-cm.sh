#!/usr/bin/env bash
# Adds perfexp's Argo CD settings (argocd-cm.yaml next to this script) to a running Argo CD's
# argocd-cm without overwriting anyone else's:
#   - resource.customizations.health.perfexp.dev_<Kind>: perfexp's own keys; added, or updated
#     when they differ (a newer perfexp);
#   - resource.customizations.ignoreDifferences.apps_Deployment / apps_StatefulSet: shared with
#     other tools; added only where the key does not exist. Where it exists and does not list
#     the manager perfexp, nothing is written: the script prints the entry and the line to add
#     under its managedFieldsManagers, and exits 3.
# Nothing else in argocd-cm is read or written. See docs/gitops.md.
#
# Usage: config/gitops/merge-argocd-cm.sh [--dry-run]     (ARGOCD_NAMESPACE, default argocd)
set -euo pipefail

ns="${ARGOCD_NAMESPACE:-argocd}"
dry_run=false
[ "${1:-}" = "--dry-run" ] && dry_run=true
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# value SOURCE KEY: a data key of the live argocd-cm (SOURCE=live) or of argocd-cm.yaml (file).
value() {
  local tpl="{{with .data}}{{with index . \"$2\"}}{{.}}{{end}}{{end}}"
  if [ "$1" = live ]; then
    kubectl -n "${ns}" get configmap argocd-cm -o go-template="${tpl}"
  else
    # --local: read the file only, nothing is sent to the cluster.
    kubectl label --local -f "${here}/argocd-cm.yaml" perfexp.dev/merge=1 -o go-template="${tpl}"
  fi
}

if [ -n "$(value live resource.customizations)" ]; then
  echo "note: argocd-cm also has the older single key resource.customizations; Argo CD reads both." >&2
  echo "      Check it holds no health check for perfexp.dev and no ignoreDifferences for apps Deployments/StatefulSets." >&2
fi

from_files=()
conflicts=0
for key in resource.customizations.health.perfexp.dev_PerfExperiment resource.customizations.health.perfexp.dev_PerfSweep \
  resource.customizations.ignoreDifferences.apps_Deployment resource.customizations.ignoreDifferences.apps_StatefulSet; do
  want="$(value file "${key}")"
  have="$(value live "${key}")"
  if [ "${have}" = "${want}" ]; then
    echo "unchanged  ${key}"
    continue
  fi
  case "${key}" in
  resource.customizations.health.*)
    [ -z "${have}" ] && echo "add        ${key}" || echo "update     ${key} (perfexp's own check)"
    ;;
  *)
    if [ -n "${have}" ]; then
      if grep -Eq '^[[:space:]]*-[[:space:]]*perfexp[[:space:]]*$' <<<"${have}"; then
        echo "unchanged  ${key} (already lists perfexp)"
      else
        conflicts=1
        echo "keep       ${key}: it exists and is not perfexp's; add perfexp to it by hand (kubectl -n ${ns} edit configmap argocd-cm):" >&2
        printf '%s\n' "${have}" | sed 's/^/             | /' >&2
        echo "           under managedFieldsManagers: (create that list if it is missing) add the line:  - perfexp" >&2
      fi
      continue
    fi
    echo "add        ${key}"
    ;;
  esac
  value file "${key}" >"${work}/${key}" # not through $(...), which drops the final newline
  from_files+=("--from-file=${key}=${work}/${key}")
done

if [ "${#from_files[@]}" -gt 0 ]; then
  # A merge patch of exactly these data keys: every other key of argocd-cm stays as it is.
  kubectl create configmap argocd-cm --dry-run=client -o yaml "${from_files[@]}" >"${work}/patch.yaml"
  if ${dry_run}; then
    echo "--- the merge patch (--dry-run: not applied)"
    cat "${work}/patch.yaml"
  else
    kubectl -n "${ns}" patch configmap argocd-cm --type merge --patch-file "${work}/patch.yaml"
  fi
fi
exit $((conflicts * 3))
