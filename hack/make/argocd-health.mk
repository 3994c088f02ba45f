# perfexp's Argo CD health checks (config/gitops) run through Argo CD's own code: the separate Go
# module hack/argocd-health imports github.com/argoproj/argo-cd/v3 (the version its go.mod
# pins) and evaluates every resource_customizations testdata object, and the Regressed
# experiment under failOnRegression, with the health assessment of Argo CD's application
# controller; docs/gitops.md. Argo CD's dependencies are kept out of perfexp's module and out
# of `make test`. Included by the main Makefile (hack/make/*.mk).

ARGOCD_HEALTH_MODULE := hack/argocd-health
ARGOCD_VERSION ?= $(shell sed -n 's|^[[:space:]]*github.com/argoproj/argo-cd/v3 \(v[^ ]*\)$$|\1|p' $(ARGOCD_HEALTH_MODULE)/go.mod)
ARGOCD_HEALTH_TEST ?= $(LOCALBIN)/argocd-health/$(ARGOCD_VERSION)/argocd-health.test

# No ##@ section of its own: the demo-*.mk targets that follow in include order have none
# either and would be listed under it by `make help`.

# The test binary is kept under $(LOCALBIN) and rebuilt only when the module changes: the
# first build compiles Argo CD and its dependencies (about 10 minutes on 2 cores, hence nice).
# -mod=readonly: the build uses go.sum as committed and never updates it.
$(ARGOCD_HEALTH_TEST): $(ARGOCD_HEALTH_MODULE)/go.mod $(ARGOCD_HEALTH_MODULE)/go.sum $(wildcard $(ARGOCD_HEALTH_MODULE)/*.go)
	@mkdir -p "$(dir $@)"
	@echo "building the Argo CD $(ARGOCD_VERSION) health test; 10 minutes or more on 2 cores when cold..."
	cd $(ARGOCD_HEALTH_MODULE) && GOFLAGS=-mod=readonly nice go test -c -o "$@" .

.PHONY: argocd-health
argocd-health: $(ARGOCD_HEALTH_TEST) ## Run the Argo CD health checks through Argo CD's own code (Lua VM, settings) and kstatus.
	cd $(ARGOCD_HEALTH_MODULE) && "$(ARGOCD_HEALTH_TEST)" -test.v -test.count=1
