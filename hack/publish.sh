#!/usr/bin/env bash
# Publishes a release that `make release` built and `make release-check` passed
# (docs/release.md#publish): the images by digest, the chart as an OCI artifact, the signed tag
# on the release commit, and the GitHub release with every file of DIST. Needs skopeo, helm, git
# and gh, logged in to the registry (skopeo login, helm registry login) and to GitHub (gh auth
# login). DRY_RUN=1 prints each command instead of running it.
#
# Usage: REGISTRY=ghcr.io/perfexp hack/publish.sh VERSION DIST
set -euo pipefail

version=${1:?usage: REGISTRY=... hack/publish.sh VERSION DIST}
dist=${2:?usage: REGISTRY=... hack/publish.sh VERSION DIST}
registry=${REGISTRY:?REGISTRY: where the images and the chart go, for example ghcr.io/perfexp}
helm=${HELM:-helm}
k6_version=${K6_VERSION:-v1.8.1}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

run() {
  if [[ "${DRY_RUN:-}" == 1 ]]; then
    printf '+'; printf ' %q' "$@"; echo
  else
    "$@"
  fi
}

# The chart pins the images by the repository they were built for: they must be the ones pushed.
repo=$("$helm" show values "$dist/perfexp-$version.tgz" | awk '/^image:/ {i = 1} i && /^  repository:/ {print $2; exit}')
if [[ $repo != "$registry/manager" ]]; then
  echo "publish.sh: the chart names the image $repo, not $registry/manager: build with" >&2
  echo "  RELEASE_MANAGER_REPO=$registry/manager RELEASE_K6_REPO=$registry/k6 make release VERSION=$version" >&2
  exit 1
fi
# The tag goes on the release commit, which holds what make release wrote into the tree.
if ! grep -q "^version: $version$" "$root/charts/perfexp/Chart.yaml" || [[ -n $(git -C "$root" status --porcelain -- charts examples .github CHANGELOG.md) ]]; then
  echo "publish.sh: commit what make release wrote (Chart.yaml, the CI examples, CHANGELOG.md) first" >&2
  exit 1
fi

digest=$(<"$dist/perfexp-manager-$version.oci.tar.digest")
run skopeo copy --all --preserve-digests "oci-archive:$dist/perfexp-manager-$version.oci.tar" "docker://$registry/manager:$version"
run skopeo copy --all --preserve-digests "oci-archive:$dist/perfexp-k6-$k6_version.oci.tar" "docker://$registry/k6:$k6_version"
if [[ "${DRY_RUN:-}" != 1 ]]; then
  pushed=$(skopeo inspect --raw "docker://$registry/manager:$version" | sha256sum | cut -d' ' -f1)
  if [[ "sha256:$pushed" != "$digest" ]]; then
    echo "publish.sh: the registry serves sha256:$pushed for manager:$version, the chart pins $digest" >&2
    exit 1
  fi
fi
run "$helm" push "$dist/perfexp-$version.tgz" "oci://$registry/charts"
run git -C "$root" tag -s "v$version" -m "perfexp v$version"
run git -C "$root" push origin "v$version"
notes=$(mktemp)
trap 'rm -f "$notes"' EXIT
# The release's own section of the changelog.
awk -v v="$version" '$0 ~ "^## \\[" v "\\]" {p = 1; next} p && /^## \[/ {exit} p' "$root/CHANGELOG.md" >"$notes"
run gh release create "v$version" --title "perfexp v$version" --notes-file "$notes" "$dist"/*
echo "publish.sh: v$version published; propose $dist/perfexp.yaml to krew-index"
