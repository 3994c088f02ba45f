#!/usr/bin/env bash
# Builds the images of the library platform (test/platform) and imports them into the local
# cluster's containerd, without a registry:
#
#   perfexp/platform-debian:TAG  a Debian root filesystem made by mmdebstrap holding PostgreSQL 15
#                                (with pg_stat_statements), postgres_exporter, OpenJDK 17 and
#                                ZooKeeper, plus Apache Kafka's jars and the JMX exporter agent
#                                from Maven Central under /opt/kafka and /opt/jmx
#   perfexp/platform-svc:TAG     the platform's Go services (test/platform/cmd), static binaries
#
# Every version comes from hack/versions.env. Each step caches its output under bin/images/platform
# and is skipped when its inputs did not change, so a second build takes seconds.
#
# Usage: hack/images/platform.sh [--no-import] [debian] [svc]   (no argument: both)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=hack/local-cluster.d/lib.sh
source "${ROOT}/hack/local-cluster.d/lib.sh"
# shellcheck source=hack/versions.env
source "${ROOT}/hack/versions.env"
LOCALBIN="${LOCALBIN:-${ROOT}/bin}"
OUT="${LOCALBIN}/images"
WORK="${OUT}/platform"
TOOL="${OUT}/.tool/images"
HERE="${ROOT}/hack/images/platform"
export GOFLAGS="-mod=mod -buildvcs=false"

import=1

# stamp_of prints a digest of the inputs of a cached step (its arguments), so the step reruns
# exactly when one of them changes.
stamp_of() { printf '%s\n' "$@" | sha256sum | cut -c1-16; }

# ROOTFS_RECIPE names the way the root filesystem is made below; raise it when that changes so
# cached root filesystems are rebuilt.
ROOTFS_RECIPE=1

# rootfs writes WORK/rootfs.tar: Debian with the pinned packages, docs and man pages left out,
# made by mmdebstrap into WORK/rootfs.d and tarred with fixed timestamps and numeric owners.
rootfs() {
  local pkgs stamp dir="${WORK}/rootfs.d" out="${WORK}/rootfs.tar"
  pkgs="postgresql-15=${POSTGRESQL_DEB_VERSION},postgresql-client-15=${POSTGRESQL_DEB_VERSION}"
  pkgs+=",prometheus-postgres-exporter=${POSTGRES_EXPORTER_DEB_VERSION}"
  pkgs+=",openjdk-17-jre-headless=${OPENJDK17_DEB_VERSION},zookeeper=${ZOOKEEPER_DEB_VERSION}"
  pkgs+=",ca-certificates,procps"
  stamp="$(stamp_of "${ROOTFS_RECIPE}" "${PLATFORM_DEBIAN_SUITE}" "${pkgs}")"
  if [ -f "${out}" ] && [ "$(cat "${out}.stamp" 2>/dev/null)" = "${stamp}" ]; then
    return 0
  fi
  mkdir -p "${WORK}"
  if [ "$(cat "${dir}.stamp" 2>/dev/null)" != "${stamp}" ]; then
    log "building the Debian root filesystem (mmdebstrap, about 5 minutes when cold)"
    command -v mmdebstrap >/dev/null || die "mmdebstrap is missing: apt-get install -y mmdebstrap"
    rm -rf "${dir}" "${dir}.stamp"
    # No PostgreSQL cluster is created by the package (the pods initialise their own data
    # directory), and no documentation. Services are not started inside (mmdebstrap's
    # policy-rc.d).
    mmdebstrap --variant=apt --mode=root --format=directory \
      --include="${pkgs}" \
      --dpkgopt='path-exclude=/usr/share/man/*' \
      --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' \
      --dpkgopt='path-exclude=/usr/share/info/*' \
      --essential-hook='mkdir -p "$1/etc/postgresql-common" && echo "create_main_cluster = false" >"$1/etc/postgresql-common/createcluster.conf"' \
      --customize-hook='rm -rf "$1/var/lib/apt/lists/"* "$1/var/cache/apt/"*.bin' \
      "${PLATFORM_DEBIAN_SUITE}" "${dir}" \
      "deb ${PLATFORM_DEBIAN_MIRROR} ${PLATFORM_DEBIAN_SUITE} main" \
      "deb ${PLATFORM_DEBIAN_MIRROR} ${PLATFORM_DEBIAN_SUITE}-updates main" \
      "deb ${PLATFORM_DEBIAN_SECURITY_MIRROR} ${PLATFORM_DEBIAN_SUITE}-security main"
    echo "${stamp}" >"${dir}.stamp"
  fi
  tar --sort=name --mtime=@0 --numeric-owner --one-file-system -C "${dir}" -cf "${out}.tmp" .
  mv "${out}.tmp" "${out}"
  echo "${stamp}" >"${out}.stamp"
}

# jars writes WORK/kafka.tar: Kafka's jars and their runtime dependencies under /opt/kafka/libs and
# the JMX exporter agent at /opt/jmx/jmx_prometheus_javaagent.jar, resolved by Maven from Central.
jars() {
  local stamp out="${WORK}/kafka.tar" stage="${WORK}/kafka-stage"
  # The JMX exporter's rules and log4j's settings are inputs too: a new rule must reach the image.
  stamp="$(stamp_of "${KAFKA_VERSION}" "${KAFKA_SCALA_VERSION}" "${JMX_EXPORTER_VERSION}" \
    "$(cd "${HERE}" && sha256sum pom.xml log4j.properties jmx-kafka.yaml jmx-zookeeper.yaml)")"
  if [ -f "${out}" ] && [ "$(cat "${out}.stamp" 2>/dev/null)" = "${stamp}" ]; then
    return 0
  fi
  command -v mvn >/dev/null || die "mvn is missing: apt-get install -y maven"
  log "resolving Kafka ${KAFKA_VERSION} and the JMX exporter ${JMX_EXPORTER_VERSION} from Maven Central"
  rm -rf "${stage}"
  mkdir -p "${stage}/opt/kafka/libs" "${stage}/opt/jmx"
  mvn -q -B -f "${HERE}/pom.xml" \
    -Dkafka.version="${KAFKA_VERSION}" -Dscala.binary.version="${KAFKA_SCALA_VERSION}" \
    -Djmx.exporter.version="${JMX_EXPORTER_VERSION}" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="${stage}/opt/kafka/libs"
  mv "${stage}/opt/kafka/libs/jmx_prometheus_javaagent-${JMX_EXPORTER_VERSION}.jar" \
    "${stage}/opt/jmx/jmx_prometheus_javaagent.jar"
  cp "${HERE}/log4j.properties" "${stage}/opt/kafka/log4j.properties"
  cp "${HERE}/jmx-kafka.yaml" "${stage}/opt/jmx/kafka.yaml"
  cp "${HERE}/jmx-zookeeper.yaml" "${stage}/opt/jmx/zookeeper.yaml"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "${stage}" -cf "${out}.tmp" opt
  mv "${out}.tmp" "${out}"
  echo "${stamp}" >"${out}.stamp"
}

# gobuild MODULE_DIR PACKAGE OUTPUT replaces OUTPUT only when the new binary differs, so its
# modification time tells whether an image holding it must be rebuilt.
gobuild() {
  (cd "$1" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$3.new" "$2")
  if cmp -s "$3.new" "$3"; then rm -f "$3.new"; else mv "$3.new" "$3"; fi
}

build_tool() {
  mkdir -p "$(dirname "${TOOL}")"
  gobuild "${ROOT}/hack/images" . "${TOOL}"
}

image_debian() {
  local tar="${OUT}/platform-debian.tar" ref="perfexp/platform-debian:${PLATFORM_TAG}"
  rootfs
  jars
  if [ -f "${tar}" ] && [ "${tar}" -nt "${WORK}/rootfs.tar" ] && [ "${tar}" -nt "${WORK}/kafka.tar" ] \
    && [ "${tar}" -nt "${TOOL}" ]; then
    :
  else
    "${TOOL}" -tag "${ref}" -out "${tar}" -user "" -entrypoint /bin/sh \
      -layer "${WORK}/rootfs.tar" -layer "${WORK}/kafka.tar" \
      -env PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    log "built image ${ref} -> ${tar}"
  fi
  [ "${import}" = 0 ] || "${ROOT}/hack/images/build.sh" --import-one "${tar}"
}

image_svc() {
  local tar="${OUT}/platform-svc.tar" ref="perfexp/platform-svc:${PLATFORM_TAG}" bin="${WORK}/platform-svc"
  mkdir -p "${WORK}"
  gobuild "${ROOT}/test/demoapp" ./cmd/platform "${bin}"
  if ! { [ -f "${tar}" ] && [ "${tar}" -nt "${bin}" ]; }; then
    "${TOOL}" -tag "${ref}" -out "${tar}" -entrypoint /platform -file "${bin}:/platform"
    log "built image ${ref} -> ${tar}"
  fi
  [ "${import}" = 0 ] || "${ROOT}/hack/images/build.sh" --import-one "${tar}"
}

main() {
  local images=() i
  while [ $# -gt 0 ]; do
    case "$1" in
      --no-import) import=0 ;;
      debian | svc) images+=("$1") ;;
      *) die "unknown argument '$1' (want --no-import, debian or svc)" ;;
    esac
    shift
  done
  [ ${#images[@]} -gt 0 ] || images=(debian svc)
  build_tool
  for i in "${images[@]}"; do
    "image_${i}"
  done
}

main "$@"
