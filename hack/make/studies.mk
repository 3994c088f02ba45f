# The reference studies (scenarios/studies) on the library platform (test/platform), in their
# short forms. Included by the main Makefile (hack/make/*.mk). Needs root, as the local cluster.

STUDY ?= kafka-mode

.PHONY: demo-studies
demo-studies: ## Local cluster + operator + library platform, then the five studies' short forms one after another (about 35 min); prints each report and the workloads' hash before/after.
	LOCALBIN=$(LOCALBIN) hack/local-cluster.d/demo-studies.sh

.PHONY: demo-study
demo-study: ## As demo-studies, one study's short form: make demo-study STUDY=cpu-limits (kafka-mode, list-refresh-rw-split, edge-parameter-sweep, checkinout-load-soak).
	LOCALBIN=$(LOCALBIN) STUDIES=$(STUDY) hack/local-cluster.d/demo-studies.sh
