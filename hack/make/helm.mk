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

# The ldflags are those of helm's own Makefile: without them `helm version` says nothing and
# helm template/lint assume Kubernetes v1.20, below the chart's kubeVersion. Helm v3.21 is
# built with client-go v0.36, so its default is v1.36.
HELM_LDFLAGS := -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
	-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=36 \
	-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=36

$(HELM):
	GOBIN=$(dir $@) go install -ldflags '$(HELM_LDFLAGS)' helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

.PHONY: helm-sync
helm-sync: manifests ## Copy the CRDs, ClusterRoles and admission policies of config/ into the chart.
	cp config/crd/bases/*.yaml $(CHART)/crds/
	cp config/rbac/role.yaml config/rbac/environment_patch_role.yaml config/rbac/metrics_auth_role.yaml config/rbac/metrics_reader_role.yaml config/rbac/user_roles.yaml $(CHART)/files/rbac/
	cp config/policy/no_escalation.yaml config/policy/spec_frozen.yaml config/policy/interleaved_order.yaml $(CHART)/files/policy/

# Any well-formed digest: lint only renders it.
HELM_LINT_DIGEST := 0000000000000000000000000000000000000000000000000000000000000000

.PHONY: helm-lint
helm-lint: $(HELM) ## helm lint and helm template the chart (defaults, the shared-cluster and namespaced forms, both parts of a split install, every optional block).
	$(HELM) lint --strict $(CHART)
	$(HELM) lint --strict $(CHART) --set scope=namespaced --set 'watchNamespaces={perfexp-demo,team-b}' \
	  --set grafana.dashboards.enabled=true --set grafana.dashboards.namespace=monitoring
	$(HELM) lint --strict $(CHART) --set metrics.secure=false --set metrics.certSecret=unused
	$(HELM) lint --strict $(CHART) --set metrics.certSecret=perfexp-metrics-tls --set 'metrics.serviceMonitor.tlsConfig.serverName=perfexp-manager-metrics.perfexp-system.svc'
	$(HELM) lint --strict $(CHART) --set rbac.environmentPatch.clusterWide=false --set 'rbac.environmentPatch.namespaces={perfexp-demo}'
	$(HELM) lint --strict $(CHART) --set fullnameOverride=perf-b --set image.digest=sha256:$(HELM_LINT_DIGEST) \
	  --set serviceAccount.create=false --set serviceAccount.name=perf-b --set replicas=2 \
	  --set podDisruptionBudget.enabled=true --set networkPolicy.enabled=true \
	  --set 'topologySpreadConstraints[0].maxSkew=1,topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname,topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway'
	$(HELM) lint --strict $(CHART) --set global.imageRegistry=mirror.example.com --set commonLabels.team=perf \
	  --set 'extraEnv[0].name=GOMEMLIMIT,extraEnv[0].value=200MiB' --set 'extraVolumes[0].name=ca,extraVolumes[0].configMap.name=ca' \
	  --set 'extraVolumeMounts[0].name=ca,extraVolumeMounts[0].mountPath=/etc/ssl/ca' \
	  --set-json 'extraObjects=["apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra"]' \
	  --set metrics.secure=false --set metrics.podMonitor.enabled=true --set metrics.serviceMonitor.scrapeTimeout=10s \
	  --set prometheusRule.enabled=true --set prometheusRule.disabled.PerfexpRegressionFound=true
	$(HELM) lint --strict $(CHART) --set installPart=cluster --set fullnameOverride=perfexp --set scope=namespaced --set 'watchNamespaces={team-a}'
	$(HELM) lint --strict $(CHART) --set installPart=namespace --set fullnameOverride=perfexp --set scope=namespaced --set 'watchNamespaces={team-a}'
	$(HELM) lint --strict $(CHART) --set rbac.create=false --set rbac.userRoles.create=false
	$(HELM) template perfexp $(CHART) --namespace perfexp-system --kube-version $(KUBE_VERSION) --include-crds >/dev/null
	$(HELM) template perfexp $(CHART) --namespace perfexp-system --kube-version $(KUBE_VERSION) --api-versions monitoring.coreos.com/v1 \
	  --set rbac.environmentPatch.clusterWide=false --set 'rbac.environmentPatch.namespaces={perfexp-demo}' >/dev/null
	$(HELM) template perfexp $(CHART) --namespace perfexp-system --kube-version $(KUBE_VERSION) --api-versions monitoring.coreos.com/v1 \
	  --set scope=namespaced --set 'watchNamespaces={perfexp-demo}' >/dev/null

.PHONY: helm-test
helm-test: ## Run the chart's tests: agreement with config/, rendering, server-side dry run (envtest).
	KUBEBUILDER_ASSETS="$(KUBE_BIN_DIR)" go test ./charts/... -count=1

.PHONY: helm-rules
helm-rules: ## Test the chart's PrometheusRule with promtool (check rules, and the alert tests of charts/testdata/rules).
	go test ./charts/ -count=1 -run 'TestPrometheusRule' -v

.PHONY: test-helm-namespaced
test-helm-namespaced: cluster-up images helm ## On the local cluster: two namespaced releases side by side, each running an experiment; one outside its release refused; no cluster-wide write (test/e2e/helm).
	KUBECONFIG=$(LOCAL_KUBECONFIG) LOCALBIN=$(LOCALBIN) HELM=$(HELM) go test -tags e2e -count=1 -timeout 30m -v \
	  -run 'TestHelmNamespacedReleasesSideBySide' ./test/e2e/helm/
