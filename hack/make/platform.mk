# The library platform (test/platform) on the local cluster: real PostgreSQL, Kafka and services.
# Included by the main Makefile (hack/make/*.mk). Not part of `make test`, CI or `make demo`.

PLATFORM_NS ?= perfexp-platform

.PHONY: platform-images
platform-images: ## Build the platform's images (Debian root filesystem, Kafka jars, services) and import them into the local cluster.
	LOCALBIN=$(LOCALBIN) hack/images/platform.sh

.PHONY: platform-deploy
platform-deploy: platform-images ## Deploy the library platform into namespace perfexp-platform on the running local cluster and wait for it.
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) apply -k test/platform/deploy
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) -n $(PLATFORM_NS) scale deploy,statefulset --all --replicas=1
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) -n $(PLATFORM_NS) rollout status statefulset/postgres-writer --timeout=300s
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) -n $(PLATFORM_NS) rollout status statefulset/postgres-reader --timeout=300s
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) -n $(PLATFORM_NS) rollout status deploy --timeout=300s
	LOCAL_KUBECONFIG=$(LOCAL_KUBECONFIG) PLATFORM_NS=$(PLATFORM_NS) test/platform/seed.sh

.PHONY: platform-idle
platform-idle: ## Scale the platform to zero pods (keeps its objects) so the node stays quiet between measurements.
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) -n $(PLATFORM_NS) scale deploy,statefulset --all --replicas=0

.PHONY: platform-down
platform-down: ## Delete the library platform (namespace perfexp-platform).
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) delete --ignore-not-found --timeout=300s namespace $(PLATFORM_NS)
