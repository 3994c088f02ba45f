#!/usr/bin/env bash
# Builds the kubectl-perfexp archives of a release and writes the krew manifest with their
# versions, URLs and sha256 sums filled in:
#   plugins/release.sh v0.3.0            # dist/kubectl-perfexp_v0.3.0_<os>_<arch>.tar.gz + dist/perfexp.yaml
# Each archive holds the plugin, its completion helper (kubectl_complete-perfexp, a .bat on
# Windows) and the license.
#   PLATFORMS=linux/amd64 plugins/release.sh v0.3.0 /tmp/dist   # one platform, to try it out
# Attach the archives to the GitHub release v0.3.0 and propose dist/perfexp.yaml to krew-index.
# krew-index asks for the license in every archive: LICENSE at the root (or $LICENSE_FILE).
set -euo pipefail

version=${1:?usage: plugins/release.sh vX.Y.Z [dist-dir]}
if [[ ! $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "release.sh: the version must look like v1.2.3, got $version" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dist=$(mkdir -p "${2:-dist}" && cd "${2:-dist}" && pwd)
license=${LICENSE_FILE:-$root/LICENSE}
if [[ ! -f $license ]]; then
  echo "release.sh: no license at $license; krew-index needs one in every archive" >&2
  exit 1
fi
platforms=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

# The template's placeholder version v0.0.0 stands in every URL and in spec.version.
# The template's header comment is replaced by one saying where the manifest came from.
manifest="# kubectl perfexp $version, written by plugins/release.sh"$'\n'
manifest+=$(sed -e '/^#/d' -e "s/v0\.0\.0/$version/g" -e 's/ # VERSION$//' "$root/plugins/perfexp.yaml")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for platform in $platforms; do
  os=${platform%/*}
  arch=${platform#*/}
  mkdir -p "$work/$os-$arch"
  bin=kubectl-perfexp complete=kubectl_complete-perfexp
  if [[ $os == windows ]]; then
    bin=kubectl-perfexp.exe complete=kubectl_complete-perfexp.bat
  fi
  (cd "$root" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=$version" \
    -o "$work/$os-$arch/$bin" ./cmd/kubectl-perfexp)
  cp "$license" "$work/$os-$arch/LICENSE" && chmod 0644 "$work/$os-$arch/LICENSE"
  cp "$root/plugins/$complete" "$work/$os-$arch/$complete"
  chmod 0755 "$work/$os-$arch/$complete"
  archive=$dist/kubectl-perfexp_${version}_${os}_${arch}.tar.gz
  # Fixed owner, mtime and no gzip timestamp: the same sources give the same sha256.
  tar -C "$work/$os-$arch" --owner=0 --group=0 --numeric-owner --mtime=1970-01-01 -cf - "$bin" "$complete" LICENSE | gzip -n >"$archive"
  sum=$(sha256 "$archive")
  placeholder=SHA256_$(tr '[:lower:]' '[:upper:]' <<<"${os}_${arch}")
  manifest=${manifest//$placeholder/$sum}
  echo "$archive $sum"
done
printf '%s\n' "$manifest" >"$dist/perfexp.yaml"
if grep -q 'sha256: SHA256_' "$dist/perfexp.yaml"; then
  echo "release.sh: $dist/perfexp.yaml still has placeholders for the platforms not built; do not publish it" >&2
fi
echo "$dist/perfexp.yaml"
