# The reference studies (scenarios/studies) on the library platform (test/platform), in their
# short forms. Included by the main Makefile (hack/make/*.mk). Needs root, as the local cluster.

STUDY ?= kafka-mode

.PHONY: demo-studies
demo-studies: ## Local cluster + operator + library platform, then the five studies' short forms one after another (about 25 min here); prints each report and the workloads' hash before/after.
	LOCALBIN=$(LOCALBIN) hack/local-cluster.d/demo-studies.sh

.PHONY: demo-study
demo-study: ## As demo-studies, one study's short form: make demo-study STUDY=cpu-limits (kafka-mode, list-refresh-rw-split, edge-parameter-sweep, checkinout-load-soak).
	LOCALBIN=$(LOCALBIN) STUDIES=$(STUDY) hack/local-cluster.d/demo-studies.sh

# The study CI runs end to end; kafka-mode's short form is the quickest (2 runs).
E2E_STUDY ?= kafka-mode

.PHONY: e2e-study
e2e-study: ## One study's short form end to end (E2E_STUDY, default kafka-mode): cluster, operator, platform images (cold: Debian mirror and Maven Central) and deploy, the study; fails unless every run succeeded and the workloads were restored.
	LOCALBIN=$(LOCALBIN) STUDIES=$(E2E_STUDY) hack/local-cluster.d/demo-studies.sh

.PHONY: e2e-studies-dry-run
e2e-studies-dry-run: ## Every study, short form, the leak-verdict run and the 24 h soak checked by the local cluster's API server (server-side dry run against config/crd): seconds, no images.
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) apply --server-side --force-conflicts -k config/crd >/dev/null
	@# A CRD applied a moment ago may have no status yet, and kubectl wait then fails at once
	@# (".status.conditions accessor error") instead of waiting: retry for up to a minute.
	for i in $$(seq 1 30); do \
	  kubectl --kubeconfig $(LOCAL_KUBECONFIG) wait --for condition=established --timeout=10s crd/perfsweeps.perfexp.dev crd/perfexperiments.perfexp.dev 2>/dev/null && break; \
	  [ "$$i" -lt 30 ] || { echo "the perfexp CRDs were not established within a minute" >&2; exit 1; }; sleep 2; done
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) apply -f test/platform/deploy/namespace.yaml
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) create namespace perfexp-soak --dry-run=client -o yaml | kubectl --kubeconfig $(LOCAL_KUBECONFIG) apply -f -
	set -e; for d in scenarios/studies/*/ scenarios/studies/*/short/ scenarios/studies/checkinout-load-soak/leak-verdict/ scenarios/studies/checkinout-load-soak/soak-24h/; do \
	  [ -f "$$d/kustomization.yaml" ] || continue; \
	  echo "$$d"; kubectl --kubeconfig $(LOCAL_KUBECONFIG) apply --dry-run=server -k "$$d" >/dev/null; done
