# shellcheck shell=bash disable=SC2034 # the settings are used by the scripts that source this file
# Shared settings and helpers of hack/local-cluster and hack/images/build.sh. Sourced, not run.

# Everything the cluster writes lives under these two directories, so `down` can remove all of
# it without guessing. The kubeconfig path is part of the contract with users and tests.
PERFEXP_LOCAL_DIR="${PERFEXP_LOCAL_DIR:-/var/lib/perfexp-local}"
PERFEXP_RUN_DIR="${PERFEXP_RUN_DIR:-/run/perfexp-local}"
STATE="${PERFEXP_LOCAL_DIR}"
RUNSTATE="${PERFEXP_RUN_DIR}"
KUBECONFIG_PATH="${STATE}/kubeconfig"
PKI="${STATE}/pki"
PIDS="${STATE}/pids"
LOGS="${STATE}/logs"

# cAdvisor inside the kubelet labels container series (container, pod, namespace) only when it
# finds containerd on its default socket, so the cluster's containerd must serve exactly this one.
CONTAINERD_SOCK=/run/containerd/containerd.sock
CTR=(ctr --address "${CONTAINERD_SOCK}" --namespace k8s.io)

# Ports and ranges. etcd stays off 2379/2380 so a distribution etcd and envtest's etcds coexist.
ETCD_CLIENT_PORT=22379
ETCD_PEER_PORT=22380
APISERVER_PORT=6443
PROMETHEUS_PORT=9090
# node_exporter on the node address, as kube-prometheus-stack's host-network DaemonSet serves it.
NODE_EXPORTER_PORT=9100
POD_CIDR=10.244.0.0/24
CLUSTER_CIDR=10.244.0.0/16
BRIDGE_GATEWAY=10.244.0.1
SERVICE_CIDR=10.96.0.0/16
KUBERNETES_SVC_IP=10.96.0.1
DNS_SVC_IP=10.96.0.10
CLUSTER_DOMAIN=cluster.local
BRIDGE=perfexp0
CNI_NETWORK=perfexp

KUBE_VERSION="${KUBE_VERSION:-v1.36.3}"
COREDNS_VERSION=v1.15.0
PAUSE_IMAGE=docker.io/perfexp/pause:3.10

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
  printf '%s ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2
  exit 1
}

require_root() {
  [ "$(id -u)" -eq 0 ] || die "must run as root (it starts kubelet, containerd and edits iptables)"
}

# proc_starttime prints the start time of a process in clock ticks since boot (field 22 of
# /proc/PID/stat). Paired with the PID it identifies a process even after PID reuse.
proc_starttime() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  # The command name (field 2) may hold spaces, so cut after its closing parenthesis.
  stat="${stat##*) }"
  # After the cut, field 22 of the full line is field 20.
  awk '{print $20}' <<<"${stat}"
}

# pid_of NAME prints the PID of component NAME if the process recorded by `up` still runs.
pid_of() {
  local f="${PIDS}/$1.pid" pid start now
  [ -f "${f}" ] || return 1
  read -r pid start <"${f}" || return 1
  [ -n "${pid}" ] && [ -n "${start}" ] || return 1
  now="$(proc_starttime "${pid}")" || return 1
  [ "${now}" = "${start}" ] || return 1
  echo "${pid}"
}

# start_component NAME HASH CMD... starts CMD in its own session with its output in
# logs/NAME.log and records its PID. HASH summarises the configuration: a running component
# whose configuration changed since it started is restarted, an unchanged one is left alone.
start_component() {
  local name="$1" hash="$2" pid
  shift 2
  if pid="$(pid_of "${name}")"; then
    if [ "$(cat "${PIDS}/${name}.hash" 2>/dev/null)" = "${hash}" ]; then
      log "${name} already running (pid ${pid})"
      return 0
    fi
    log "${name}: configuration changed, restarting"
    stop_component "${name}"
  fi
  mkdir -p "${PIDS}" "${LOGS}"
  printf '\n==== %s starting: %s\n' "$(date -Is)" "$*" >>"${LOGS}/${name}.log"
  # setsid detaches the daemon from the caller's terminal and process group, so Ctrl-C in a
  # `make` that ran `up` does not kill the cluster. Without job control the background child is
  # not a group leader, so setsid execs in place and $! is the daemon's own PID.
  setsid "$@" >>"${LOGS}/${name}.log" 2>&1 </dev/null &
  pid=$!
  echo "${pid} $(proc_starttime "${pid}")" >"${PIDS}/${name}.pid"
  echo "${hash}" >"${PIDS}/${name}.hash"
  log "${name} started (pid ${pid}, log ${LOGS}/${name}.log)"
}

# stop_components SECONDS NAME... sends SIGTERM to the recorded processes at once, waits for
# them to exit, and sends SIGKILL to any still running after the grace period. Nothing is killed
# by name: only the PID (and start time) that `up` recorded.
stop_components() {
  local grace="$1" name pid i left
  shift
  for name in "$@"; do
    if pid="$(pid_of "${name}")"; then
      log "stopping ${name} (pid ${pid})"
      kill -TERM "${pid}" 2>/dev/null || true
    fi
  done
  for ((i = 0; i < grace * 10; i++)); do
    left=0
    for name in "$@"; do
      pid_of "${name}" >/dev/null && left=1 && break
    done
    [ "${left}" = 1 ] || break
    sleep 0.1
  done
  for name in "$@"; do
    if pid="$(pid_of "${name}")"; then
      log "${name} did not stop within ${grace}s, killing it"
      kill -KILL "${pid}" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do
        pid_of "${name}" >/dev/null || break
        sleep 0.1
      done
    fi
    rm -f "${PIDS}/${name}.pid" "${PIDS}/${name}.hash"
  done
}

stop_component() { stop_components 15 "$1"; }

# wait_for DESCRIPTION SECONDS COMPONENT CMD... retries CMD until it succeeds; on timeout it
# shows the end of the component's log, which is where the reason almost always is.
wait_for() {
  local what="$1" timeout="$2" comp="$3" deadline
  shift 3
  deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if [ -n "${comp}" ] && ! pid_of "${comp}" >/dev/null; then
      tail -n 30 "${LOGS}/${comp}.log" >&2 2>/dev/null || true
      die "${comp} exited while waiting for ${what}; full log: ${LOGS}/${comp}.log"
    fi
    if [ "${SECONDS}" -ge "${deadline}" ]; then
      [ -z "${comp}" ] || tail -n 30 "${LOGS}/${comp}.log" >&2 2>/dev/null || true
      die "timed out after ${timeout}s waiting for ${what}${comp:+; full log: ${LOGS}/${comp}.log}"
    fi
    sleep 0.5
  done
}

# node_ip prints the address the node registers with. The kubelet refuses loopback, and
# `kubectl logs` needs a routable node address, so it is the address of the interface holding
# the default route (or the first global IPv4 address), unless NODE_IP overrides it.
node_ip() {
  if [ -n "${NODE_IP:-}" ]; then
    echo "${NODE_IP}"
    return
  fi
  local dev ip
  dev="$(ip -4 route show default 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "dev") {print $(i + 1); exit}}')"
  if [ -n "${dev}" ]; then
    ip="$(ip -4 -o addr show dev "${dev}" scope global | awk '{split($4, a, "/"); print a[1]; exit}')"
  fi
  if [ -z "${ip:-}" ]; then
    ip="$(ip -4 -o addr show scope global | awk '$2 != "'"${BRIDGE}"'" {split($4, a, "/"); print a[1]; exit}')"
  fi
  [ -n "${ip}" ] || die "found no non-loopback IPv4 address for the node; set NODE_IP"
  echo "${ip}"
}

node_name() {
  local n="${NODE_NAME:-$(hostname)}"
  echo "${n,,}"
}

# kubectl_bin prefers a kubectl built with the cluster's own version, then the one on PATH.
kubectl_bin() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  if [ -x "${root}/bin/k8s/${KUBE_VERSION}/kubectl" ]; then
    echo "${root}/bin/k8s/${KUBE_VERSION}/kubectl"
  elif command -v kubectl >/dev/null 2>&1; then
    command -v kubectl
  else
    die "kubectl not found: install it (it is not built by hack/kube-binaries.sh)"
  fi
}

kc() { "$(kubectl_bin)" --kubeconfig "${KUBECONFIG_PATH}" "$@"; }

containerd_serving() { "${CTR[@]}" version >/dev/null 2>&1; }

# workloads_hash NS: a short hash of the specs of every Deployment and StatefulSet in NS. Every
# run restores what it changed, so an experiment, sweep or search must leave it unchanged.
workloads_hash() {
  kc -n "$1" get deploy,statefulset \
    -o jsonpath='{range .items[*]}{.kind}/{.metadata.name}{" "}{.spec}{"\n"}{end}' | sha256sum | cut -c1-16
}

# hash_after NAMESPACE BEFORE prints the workloads' hash once the runs have ended: a run
# restores the environment before it ends, and the hash is read once more after a short pause
# when it differs from BEFORE, so a rollout still settling is not mistaken for a difference.
hash_after() {
  local after
  after="$(workloads_hash "$1")"
  if [ "${after}" != "$2" ]; then
    sleep 20
    after="$(workloads_hash "$1")"
  fi
  echo "${after}"
}
