# shellcheck shell=bash
# Configuration files of the local cluster's components. Sourced by hack/local-cluster after
# lib.sh. Each writer prints nothing and leaves the file in place; the caller hashes the file so
# a change restarts the component that reads it.

# write_file FILE: stdin -> FILE, replaced atomically so a running reader never sees half a file.
write_file() {
  local tmp
  mkdir -p "$(dirname "$1")"
  tmp="$(mktemp "$1.XXXX")"
  cat >"${tmp}"
  mv "${tmp}" "$1"
}

write_containerd_config() {
  write_file "${STATE}/containerd/config.toml" <<EOF
# containerd of the perfexp local cluster (written by hack/local-cluster; edits are overwritten).
version = 2
root = "${STATE}/containerd/root"
state = "${RUNSTATE}/containerd"
# Snapshotters this host cannot use only add start-up noise.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "${CONTAINERD_SOCK}"

[plugins."io.containerd.internal.v1.opt"]
  path = "${STATE}/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  # Built locally by hack/images; no registry is reachable to pull the upstream one.
  sandbox_image = "${PAUSE_IMAGE}"
  # The VM lacks CAP_SYS_RESOURCE, so nothing may lower oom_score_adj; without this every pod
  # sandbox fails with "can't get final child's PID from pipe".
  restrict_oom_score_adj = true
  # Keeps network namespaces under our state directory, so down finds and unmounts them all.
  netns_mounts_under_state_dir = true
  enable_cdi = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${STATE}/cni/net.d"

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        # cgroup v1 with the cgroupfs driver, matching the kubelet's cgroupDriver.
        SystemdCgroup = false
        Root = "${RUNSTATE}/runc"
EOF
}

write_cni_config() {
  # One bridge on the node; pods get 10.244.0.0/24 and reach the host at the gateway. No
  # masquerading: pods have no business talking beyond this machine.
  write_file "${STATE}/cni/net.d/10-${CNI_NETWORK}.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "${CNI_NETWORK}",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "${BRIDGE}",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "${STATE}/cni/ipam",
        "ranges": [[{"subnet": "${POD_CIDR}", "gateway": "${BRIDGE_GATEWAY}"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {
      "type": "portmap",
      "capabilities": {"portMappings": true}
    }
  ]
}
EOF
}

write_kubelet_config() {
  local ip="$1"
  write_file "${STATE}/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine runs cgroup v1, which the kubelet only accepts when told to.
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://${CONTAINERD_SOCK}
address: ${ip}
port: 10250
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: ${PKI}/kubelet-serving.crt
tlsPrivateKeyFile: ${PKI}/kubelet-serving.key
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
    cacheTTL: 30s
  x509:
    clientCAFile: ${PKI}/ca.crt
authorization:
  mode: Webhook
clusterDomain: ${CLUSTER_DOMAIN}
clusterDNS:
- ${DNS_SVC_IP}
resolvConf: /etc/resolv.conf
podLogsDir: ${STATE}/pod-logs
failSwapOn: false
serializeImagePulls: false
# The node is a shared development machine: evict only when it is really about to run out,
# and never garbage-collect the locally imported images (they cannot be pulled back).
evictionHard:
  memory.available: 100Mi
  nodefs.available: 2%
  imagefs.available: 2%
  nodefs.inodesFree: 2%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 110
EOF
}

write_kube_proxy_config() {
  local ip="$1" node="$2"
  write_file "${STATE}/kube-proxy/config.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: ${STATE}/kubeconfigs/kube-proxy.kubeconfig
mode: iptables
clusterCIDR: ${CLUSTER_CIDR}
hostnameOverride: ${node}
bindAddress: ${ip}
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
# Zero leaves the host's conntrack sysctls as they are; the VM may not let us change them.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
}

# write_prometheus_config IP NODE: scrape labels follow kube-prometheus-stack, so the operator's
# queries (job="kubelet", metrics_path="/metrics/cadvisor", ...) work unchanged on real clusters.
# Debian's Prometheus is built without Kubernetes service discovery, so the kubelet is a static
# target and everything in pods comes from files kept current by discovery.sh.
write_prometheus_config() {
  local ip="$1" node="$2" tok="${STATE}/prometheus/token" ca="${PKI}/ca.crt" sd="${STATE}/prometheus/sd"
  {
    cat <<EOF
# Prometheus of the perfexp local cluster (written by hack/local-cluster; edits are overwritten).
global:
  scrape_interval: 5s
  scrape_timeout: 5s
  evaluation_interval: 15s

scrape_configs:
- job_name: prometheus
  static_configs:
  - targets: ["127.0.0.1:${PROMETHEUS_PORT}"]
EOF
    local path
    for path in /metrics /metrics/cadvisor /metrics/resource /metrics/probes; do
      cat <<EOF
- job_name: kubelet${path//\//-}
  scheme: https
  metrics_path: ${path}
  # cAdvisor's own namespace/pod/container labels must win over target labels.
  honor_labels: true
  tls_config:
    ca_file: ${ca}
  authorization:
    credentials_file: ${tok}
  static_configs:
  - targets: ["${ip}:10250"]
    labels:
      node: ${node}
      endpoint: https-metrics
  relabel_configs:
  - target_label: job
    replacement: kubelet
  - target_label: metrics_path
    replacement: ${path}
EOF
    done
    cat <<EOF
# node_exporter on the host (hack/local-cluster start_node_exporter), labelled as
# kube-prometheus-stack's ServiceMonitor labels its host-network DaemonSet: job node-exporter,
# instance the node's address and port (the kubelet's instance has the same address, which is
# how the analysis matches the two; internal/analysis/nodeload.go).
- job_name: node-exporter
  static_configs:
  - targets: ["${ip}:${NODE_EXPORTER_PORT}"]
    labels:
      endpoint: http-metrics
# The operator's metrics Service: controller-runtime serves it over HTTPS and authorizes the
# caller with a TokenReview and SubjectAccessReview, hence the service account token. Its
# series carry the experiment's own namespace label, kept over the target's (honor_labels).
- job_name: perfexp-operator
  scheme: https
  honor_labels: true
  tls_config:
    insecure_skip_verify: true
  authorization:
    credentials_file: ${tok}
  file_sd_configs:
  - files: ["${sd}/operator.json"]
# Plain HTTP workloads that ask to be scraped (the demo services): annotation
# prometheus.io/scrape="true", optional prometheus.io/port and prometheus.io/path.
- job_name: kubernetes-pods
  file_sd_configs:
  - files: ["${sd}/pods.json"]
EOF
  } | write_file "${STATE}/prometheus/prometheus.yml"
}
