# The capacity searches and the performance bisect of the demo on the local cluster (docs/capacity.md,
# docs/bisect.md). Included by the main Makefile (hack/make/*.mk). Needs root, as the local cluster.

.PHONY: demo-capacity
demo-capacity: ## Local cluster + operator + demo app + two capacity searches of check-in/check-out (scenarios/demo-capacity: with and without circulation's CPU limit, about 10 min); prints both answers, their probes and reports, and the workloads' hash before/after.
	LOCALBIN=$(LOCALBIN) SEARCH_DIR=scenarios/demo-capacity hack/local-cluster.d/demo-search.sh

.PHONY: demo-bisect
demo-bisect: ## Local cluster + operator + demo app + the demo's next release (perfexp/demo-*:next, inventory built slow) + a bisect over circulation's and inventory's images (scenarios/demo-bisect, 3 steps, 18 runs, about 11 min); prints the culprit, the steps and the report.
	LOCALBIN=$(LOCALBIN) SEARCH_DIR=scenarios/demo-bisect SEARCH_IMAGES=demo-next hack/local-cluster.d/demo-search.sh
