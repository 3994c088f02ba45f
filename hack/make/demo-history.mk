# The run-history demo on the local cluster. Included by the main Makefile (hack/make/*.mk).

.PHONY: demo-history
demo-history: ## Local cluster + operator + demo app + 8 check-in/check-out runs, a slower release from the 5th; deletes them and prints `kubectl perfexp history`.
	LOCALBIN=$(LOCALBIN) hack/local-cluster.d/demo-history.sh
