# shellcheck shell=bash
# The demo's offered load, set from the demo's measured capacity on this machine. Sourced by
# demo.sh, after lib.sh.
#
# Why: the demo compares runs at a fixed arrival rate, and a fixed rate sits at a different
# point of circulation's CPU limit on every machine (40 iterations/s needed 0.24 of its 0.25
# cores on one two-core machine, and a few percent of it on a faster one). At the knee of the
# limit, latency is set by CFS throttling and its run-to-run spread is tens of percent: no
# comparison can decide anything there. So before the first demo run, a closed-loop k6 probe
# (8 VUs, no think time, DEMO_PROBE_SECONDS) drives the demo as hard as it goes and measures
# its capacity in iterations per second; the experiments then offer DEMO_LOAD_PERCENT (35) % of
# it. A queue that is far from saturation has a stable p95, on a quiet node and beside a
# moderate neighbour, and the probe itself ran beside whatever neighbour there was.
#
# DEMO_RATE=N skips the probe and offers N iterations/s.

DEMO_LOAD_PERCENT="${DEMO_LOAD_PERCENT:-35}"
DEMO_PROBE_SECONDS="${DEMO_PROBE_SECONDS:-40}"
# The demo's k6 scenarios allow at most this many VUs (maxVUs): the rate stays where they keep up.
DEMO_RATE_MAX=60
DEMO_RATE_MIN=4

# demo_probe_capacity NS prints the demo's closed-loop throughput in iterations/s (a decimal),
# or nothing when the probe failed. Its log goes to stderr.
demo_probe_capacity() {
  local ns="$1" pod=perfexp-demo-capacity-probe out rate
  kc -n "${ns}" delete pod "${pod}" --ignore-not-found --wait=true >/dev/null 2>&1 || true
  kc -n "${ns}" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: ${pod}
  labels: {app.kubernetes.io/name: demo-capacity-probe}
spec:
  restartPolicy: Never
  containers:
  - name: k6
    image: perfexp/k6:v1.8.1
    imagePullPolicy: Never
    args: [run, --quiet, --vus, "8", --duration, "${DEMO_PROBE_SECONDS}s", -e, "BASE_URL=http://circulation:8080", /scripts/script.js]
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {memory: 256Mi}
    volumeMounts:
    - {name: script, mountPath: /scripts}
  volumes:
  - name: script
    configMap: {name: checkinout-script}
EOF
  if ! kc -n "${ns}" wait --for=jsonpath='{.status.phase}'=Succeeded "pod/${pod}" \
    --timeout="$((DEMO_PROBE_SECONDS + 120))s" >/dev/null; then
    kc -n "${ns}" logs "${pod}" --tail=20 >&2 || true
    kc -n "${ns}" delete pod "${pod}" --ignore-not-found --wait=false >/dev/null 2>&1 || true
    return 0
  fi
  out="$(kc -n "${ns}" logs "${pod}" 2>/dev/null || true)"
  kc -n "${ns}" delete pod "${pod}" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  # k6's summary line: "iterations...........: 1234   30.85/s".
  rate="$(sed -nE 's/^ *iterations\.*: *[0-9]+ +([0-9.]+)\/s.*/\1/p' <<<"${out}" | head -1)"
  printf '%s' "${rate}"
}

# demo_offered_rate CAPACITY prints DEMO_LOAD_PERCENT % of it, rounded, within
# [DEMO_RATE_MIN, DEMO_RATE_MAX].
demo_offered_rate() {
  awk -v c="$1" -v p="${DEMO_LOAD_PERCENT}" -v lo="${DEMO_RATE_MIN}" -v hi="${DEMO_RATE_MAX}" \
    'BEGIN { r = int(c * p / 100 + 0.5); if (r < lo) r = lo; if (r > hi) r = hi; print r }'
}

# demo_overlay RATE NOTE writes a kustomize overlay of scenarios/demo whose experiments offer
# RATE iterations/s, annotated with NOTE, and prints its directory (under bin/, not committed).
demo_overlay() {
  local rate="$1" note="$2" dir="${ROOT}/bin/demo-overlay"
  mkdir -p "${dir}"
  cat >"${dir}/kustomization.yaml" <<EOF
# Written by hack/local-cluster.d/demo-load.sh: scenarios/demo at the offered load measured here.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../../scenarios/demo
patches:
- target: {kind: PerfExperiment}
  patch: |-
    - op: replace
      path: /spec/load/scenarios/0/arrivalRate/rate
      value: ${rate}
commonAnnotations:
  demo.perfexp.dev/offered-load: "${note}"
EOF
  printf '%s' "${dir}"
}
