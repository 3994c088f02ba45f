# Local single-node cluster, demo and end-to-end tests. Included by the main Makefile, which
# defines LOCALBIN. Everything here needs root: it starts a kubelet and containerd.

LOCAL_KUBECONFIG ?= /var/lib/perfexp-local/kubeconfig
E2E_TIMEOUT ?= 40m

##@ Local cluster

.PHONY: cluster-up
cluster-up: ## Start the local single-node Kubernetes (idempotent; repairs a half-started one).
	LOCALBIN=$(LOCALBIN) hack/local-cluster up

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and remove its processes, bridge, iptables chains, mounts and data.
	LOCALBIN=$(LOCALBIN) hack/local-cluster down

.PHONY: cluster-status
cluster-status: ## Show which parts of the local cluster run, its node, pods and URLs.
	LOCALBIN=$(LOCALBIN) hack/local-cluster status

.PHONY: images
images: ## Build the k6, demo and operator images and import them into the local cluster.
	LOCALBIN=$(LOCALBIN) hack/images/build.sh all

.PHONY: demo-deploy
demo-deploy: cluster-up ## Deploy the demo system under test (test/demoapp) into namespace perfexp-demo.
	LOCALBIN=$(LOCALBIN) hack/images/build.sh demo
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) apply -k test/demoapp/deploy
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) -n perfexp-demo rollout status deploy --timeout=180s

.PHONY: demo
demo: ## Local cluster + operator + demo app + demo experiments; waits and prints their results.
	LOCALBIN=$(LOCALBIN) hack/local-cluster.d/demo.sh

.PHONY: demo-reset
demo-reset: ## Delete the demo experiments so the next `make demo` runs them again.
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) delete --ignore-not-found -k scenarios/demo

# How many times `make test-faults` injects each fault, and where it writes the table of runs,
# restored and terminal per fault (`make test-e2e` runs each once).
FAULTS_RUNS ?= 3
FAULTS_TABLE ?= $(CURDIR)/bin/faults-table.md

.PHONY: test-faults
test-faults: cluster-up images ## The fault suite at length (test/e2e/faults, FAULTS_LONG=1): FAULTS_RUNS runs per fault (3), more manager kills, a k6 pod stuck Terminating, the kubelet stopped mid-run; the table goes to FAULTS_TABLE.
	mkdir -p $(dir $(FAULTS_TABLE))
	KUBECONFIG=$(LOCAL_KUBECONFIG) LOCALBIN=$(LOCALBIN) FAULTS_LONG=1 FAULTS_RUNS=$(FAULTS_RUNS) FAULTS_TABLE=$(FAULTS_TABLE) \
	  go test -tags e2e -count=1 -timeout 240m -v ./test/e2e/faults/

.PHONY: test-e2e
test-e2e: cluster-up images helm ## Run the end-to-end tests (build tag e2e) on the local cluster, starting it if needed.
	KUBECONFIG=$(LOCAL_KUBECONFIG) LOCALBIN=$(LOCALBIN) go test -tags e2e -p 1 -count=1 -timeout $(E2E_TIMEOUT) -v ./test/e2e/...

.PHONY: bench-runners
bench-runners: cluster-up images ## k6's own CPU and memory per 1,000 VUs: 1,000 VUs over 8 k6 pods for 2 minutes (RUNNER_VUS, RUNNER_DURATION).
	KUBECONFIG=$(LOCAL_KUBECONFIG) LOCALBIN=$(LOCALBIN) RUNNER_VUS=$${RUNNER_VUS:-1000} RUNNER_DURATION=$${RUNNER_DURATION:-2m} \
	  go test -tags e2e -count=1 -timeout 20m -v -run TestRunnerPodsAcrossTheNodeAreSized ./test/e2e/
