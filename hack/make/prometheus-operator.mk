# Prometheus 3 under prometheus-operator on the local cluster, scraping the kubelet the way
# kube-prometheus-stack does, beside the Debian Prometheus 2.42 (docs/install.md, "Prometheus 3
# under prometheus-operator"). Included by the main Makefile (hack/make/*.mk). The operator's
# version is pinned in hack/prometheus-operator.sh, Prometheus' in hack/prometheus3.sh.

##@ Prometheus 3 under prometheus-operator

.PHONY: prometheus-operator
prometheus-operator: ## Build prometheus-operator and prometheus-config-reloader (static, from their Go module) into bin/prometheus-operator/<version>/ unless they are there.
	LOCALBIN=$(LOCALBIN) hack/prometheus-operator.sh

.PHONY: cluster-prom3
cluster-prom3: ## On the running local cluster: the operator's CRDs, its images, the operator and a Prometheus 3 in namespace prom3 (idempotent; waits until cAdvisor is scraped).
	LOCALBIN=$(LOCALBIN) KUBECONFIG=$(LOCAL_KUBECONFIG) hack/local-cluster.d/prom3.sh up

.PHONY: cluster-prom3-down
cluster-prom3-down: ## Remove namespace prom3, its cluster roles, the kubelet Service the operator wrote and the operator's CRDs (KEEP_CRDS=1 keeps them).
	LOCALBIN=$(LOCALBIN) KUBECONFIG=$(LOCAL_KUBECONFIG) hack/local-cluster.d/prom3.sh down

.PHONY: cluster-prom3-status
cluster-prom3-status: ## Show the Prometheus CR's conditions and every target of Prometheus 3 with its health.
	LOCALBIN=$(LOCALBIN) KUBECONFIG=$(LOCAL_KUBECONFIG) hack/local-cluster.d/prom3.sh status
