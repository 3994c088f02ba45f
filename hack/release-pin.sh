#!/usr/bin/env bash
# Writes a release's version into the tree, for the release commit that the tag then points at
# (docs/release.md):
#   - charts/perfexp/Chart.yaml: version and appVersion VERSION (the default image tag);
#   - the CI examples and the composite action: the plugin release vVERSION and the sha256 of its
#     linux/amd64 archive in DIST (the lines marked "# PERFEXP_VERSION" and
#     "# PERFEXP_PLUGIN_SHA256");
#   - CHANGELOG.md: the Unreleased section becomes "## [VERSION] - <today, UTC>" under a new,
#     empty Unreleased, with the compare links at the bottom.
# The plugin archives are reproducible from the sources and the version alone, and none of these
# files is part of them, so the sums hold for the release commit too.
#
# Usage: hack/release-pin.sh VERSION DIST
set -euo pipefail

version=${1:?usage: hack/release-pin.sh VERSION DIST}
dist=${2:?usage: hack/release-pin.sh VERSION DIST}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
archive="$dist/kubectl-perfexp_v${version}_linux_amd64.tar.gz"
if [[ ! -f $archive ]]; then
  echo "release-pin.sh: no $archive: run the plugin's release first" >&2
  exit 1
fi
sum=$(sha256sum "$archive" | cut -d' ' -f1)

sed -i -E -e "s/^version: .*/version: ${version}/" -e "s/^appVersion: .*/appVersion: \"${version}\"/" \
  "$root/charts/perfexp/Chart.yaml"

for f in examples/ci/github-actions.yaml examples/ci/gitlab-ci.yml .github/actions/perfexp-gate/action.yml; do
  before=$(grep -c -E '# PERFEXP_(VERSION|PLUGIN_SHA256)$' "$root/$f" || true)
  if [[ $before -ne 2 ]]; then
    echo "release-pin.sh: $f has $before of the 2 marked lines" >&2
    exit 1
  fi
  sed -i -E \
    -e "s/^([[:space:]]*[A-Za-z0-9_-]+:) [^ ]+ # PERFEXP_VERSION$/\1 v${version} # PERFEXP_VERSION/" \
    -e "s/^([[:space:]]*[A-Za-z0-9_-]+:) [^ ]+ # PERFEXP_PLUGIN_SHA256$/\1 ${sum} # PERFEXP_PLUGIN_SHA256/" \
    "$root/$f"
done

changelog="$root/CHANGELOG.md"
if grep -q "^## \[${version}\]" "$changelog"; then
  echo "release-pin.sh: CHANGELOG.md already has ${version}"
else
  today=$(date -u +%Y-%m-%d)
  previous=$(grep -m1 -oE '^## \[[0-9]+\.[0-9]+\.[0-9]+[^]]*\]' "$changelog" | tr -d '#[] ' || true)
  awk -v v="$version" -v d="$today" '
    !done && /^## \[Unreleased\]/ { print; print ""; print "## [" v "] - " d; done = 1; next }
    { print }' "$changelog" >"$changelog.new"
  # The link of Unreleased compares with the new tag; the new version's with the one before.
  sed -i -E "s#^\[Unreleased\]: .*#[Unreleased]: https://github.com/perfexp/perfexp/compare/v${version}...HEAD#" "$changelog.new"
  if [[ -n $previous ]]; then
    echo "[${version}]: https://github.com/perfexp/perfexp/compare/v${previous}...v${version}" >>"$changelog.new"
  else
    echo "[${version}]: https://github.com/perfexp/perfexp/releases/tag/v${version}" >>"$changelog.new"
  fi
  mv "$changelog.new" "$changelog"
fi

echo "release-pin.sh: wrote ${version} into Chart.yaml, the CI examples (plugin sha256 ${sum}) and CHANGELOG.md"
echo "  commit them (git commit -am 'Release v${version}') and tag that commit: docs/release.md#publish"
