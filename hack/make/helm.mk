# The Helm chart charts/perfexp. Included by the main Makefile (hack/make/*.mk).
# helm is built from its Go module at the version go.mod pins (the chart tests render with the
# same module), so the binary and the tests agree on how a chart renders.

# Kept equal to go.mod's helm.sh/helm/v3 (a chart test checks): v3.22 needs k8s.io v0.37.
HELM_VERSION ?= v3.21.4
HELM ?= $(TOOLS)/helm-$(HELM_VERSION)/helm
CHART ?= charts/perfexp

##@ Helm

.PHONY: helm
helm: $(HELM) ## Build the helm binary (helm.sh/helm/v3 at go.mod's version) into bin/tools.

$(HELM):
	GOBIN=$(dir $@) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

.PHONY: helm-sync
helm-sync: manifests ## Copy the CRDs, ClusterRoles and admission policies of config/ into the chart.
	cp config/crd/bases/*.yaml $(CHART)/crds/
	cp config/rbac/role.yaml config/rbac/environment_patch_role.yaml $(CHART)/files/rbac/
	cp config/policy/no_escalation.yaml config/policy/spec_frozen.yaml $(CHART)/files/policy/

.PHONY: helm-lint
helm-lint: $(HELM) ## helm lint and helm template the chart (default values and the shared-cluster form).
	$(HELM) lint --strict $(CHART)
	$(HELM) lint --strict $(CHART) --set rbac.environmentPatch.clusterWide=false --set 'rbac.environmentPatch.namespaces={perfexp-demo}'
	$(HELM) template perfexp $(CHART) --namespace perfexp-system --include-crds >/dev/null
	$(HELM) template perfexp $(CHART) --namespace perfexp-system --api-versions monitoring.coreos.com/v1 \
	  --set rbac.environmentPatch.clusterWide=false --set 'rbac.environmentPatch.namespaces={perfexp-demo}' >/dev/null

.PHONY: helm-test
helm-test: ## Run the chart's tests: agreement with config/, rendering, server-side dry run (envtest).
	KUBEBUILDER_ASSETS="$(KUBE_BIN_DIR)" go test ./charts/... -count=1
