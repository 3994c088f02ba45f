#!/usr/bin/env bash
# The performance gate of a pipeline: create an experiment, wait for its outcome, keep its
# reports, and fail the step when the outcome is one the pipeline does not accept.
#
# Both pipeline examples (github-actions.yaml, gitlab-ci.yml) run this script, so the steps
# they run are the ones cmd/kubectl-perfexp/ci_examples_test.go runs against an API server.
#
# Needs kubectl and the kubectl-perfexp plugin on the PATH and a kubeconfig for the cluster.
# Settings (environment variables):
#   PERFEXP_EXPERIMENT  the experiment manifest; it has metadata.generateName, so each pipeline
#                       run creates a new experiment (one runs once)   (required)
#   PERFEXP_NAMESPACE   where it runs                                  (default: the context's)
#   PERFEXP_TIMEOUT     how long to wait for it                        (default: 30m)
#   PERFEXP_FAIL_ON     outcomes that fail the step                    (default: regressed,fail,invalid)
#   PERFEXP_REPORTS     where the JUnit and HTML reports go            (default: perfexp-reports)
# Exit code: kubectl perfexp watch's (docs/ci.md): 0 accepted, 3 Fail, 4 Invalid, 5 Regressed,
# 6 Inconclusive, 7 Failed, 8 Aborted, 9 timed out, 1 any other error.
set -euo pipefail

: "${PERFEXP_EXPERIMENT:?set PERFEXP_EXPERIMENT to the experiment manifest}"
timeout=${PERFEXP_TIMEOUT:-30m}
fail_on=${PERFEXP_FAIL_ON:-regressed,fail,invalid}
reports=${PERFEXP_REPORTS:-perfexp-reports}
ns_flag=()
if [[ -n "${PERFEXP_NAMESPACE:-}" ]]; then
  ns_flag=(-n "$PERFEXP_NAMESPACE")
fi
mkdir -p "$reports"

# kubectl create (not apply) honours generateName; -o name prints perfexperiment.perfexp.dev/NAME.
created=$(kubectl create -f "$PERFEXP_EXPERIMENT" "${ns_flag[@]}" -o name)
name=${created##*/}
echo "$name" > "$reports/experiment-name"
echo "created $created"

set +e
kubectl perfexp watch "$name" "${ns_flag[@]}" --timeout "$timeout" --fail-on "$fail_on"
code=$?
set -e

# The reports, whatever the outcome; there are none when the experiment ended before its analysis.
kubectl perfexp report "$name" "${ns_flag[@]}" -o junit --file "$reports/perfexp-junit.xml" || true
kubectl perfexp report "$name" "${ns_flag[@]}" -o html --file "$reports/perfexp-report.html" || true

case $code in
  0) echo "perfexp: $name accepted" ;;
  3) echo "perfexp: $name verdict Fail (an objective missed, a k6 threshold crossed, or a regression)" ;;
  4) echo "perfexp: $name verdict Invalid (the results cannot be trusted)" ;;
  5) echo "perfexp: $name Regressed against its baseline" ;;
  6) echo "perfexp: $name Inconclusive" ;;
  7) echo "perfexp: $name ended Failed" ;;
  8) echo "perfexp: $name was Aborted" ;;
  9) echo "perfexp: $name had not ended after $timeout" ;;
  *) echo "perfexp: could not follow $name" ;;
esac
exit "$code"
