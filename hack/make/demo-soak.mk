# The memory-leak soak of the demo on the local cluster. Included by the main Makefile (hack/make/*.mk).

.PHONY: demo-soak
demo-soak: ## Two 45-minute soaks at once (SOAK_DURATION): the demo as it is, and with circulation leaking SOAK_LEAK_BYTES (512) per request; prints both leak verdicts.
	LOCALBIN=$(LOCALBIN) hack/local-cluster.d/demo-soak.sh
