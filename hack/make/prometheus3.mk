# Prometheus 3, built from its Go module, so the analysis queries are tested against the
# Prometheus kube-prometheus-stack runs as well as against Debian's 2.42 (docs/install.md,
# "Prometheus versions"). Included by the main Makefile (hack/make/*.mk). The version is pinned
# once, in hack/prometheus3.sh (PROMETHEUS3_MODULE_VERSION overrides it).

# The packages whose tests start a real Prometheus (internal/analysis/promtest), and the
# controller tests among them that do (the others need no Prometheus and run in `make test`).
# internal/load's remote-write test starts the prometheus on PATH itself, so the binary's
# directory goes first on PATH too.
PROMTEST_PACKAGES ?= ./internal/analysis/... ./internal/dashboards/... ./cmd/kubectl-perfexp/...
PROMTEST_CONTROLLER_TESTS ?= ^(TestPrometheusAnalyzer|TestPrometheusAnalyzerRightAfterTheLoad|TestDashboardDelivery|TestPrecheck)$$
PROMETHEUS_LOAD_TESTS ?= ^TestRealK6RemoteWritesTaggedSamples$$

##@ Prometheus 3

.PHONY: prometheus3
prometheus3: ## Build Prometheus 3 (static, from its Go module) into bin/prometheus3/<version>/ unless it is there.
	hack/prometheus3.sh

.PHONY: test-prometheus3
test-prometheus3: test-deps ## Run every test that starts a real Prometheus against Prometheus 3 (`make test` runs them against 2.42).
	prom="$$(hack/prometheus3.sh)"; "$$prom" --version | sed -n 1p; \
	export PROMETHEUS="$$prom" PATH="$$(dirname "$$prom"):$$PATH" K6="$(K6)"; \
	go test $(PROMTEST_PACKAGES) -count=1 -timeout 30m; \
	go test ./internal/load -run '$(PROMETHEUS_LOAD_TESTS)' -count=1; \
	KUBEBUILDER_ASSETS="$(KUBE_BIN_DIR)" go test ./controllers -run '$(PROMTEST_CONTROLLER_TESTS)' -count=1 -timeout 30m
