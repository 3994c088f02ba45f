# Release artifacts (docs/release.md). `make release VERSION=0.3.0` writes everything a release
# publishes into dist/ and pushes nothing; it also writes the version into the tree (Chart.yaml,
# the CI examples' plugin pin, CHANGELOG.md) for the release commit. `make publish` pushes. Not part of `make test`: the cross builds take
# minutes.

DIST ?= dist
K6_VERSION ?= v1.8.1
RELEASE_MANAGER_REPO ?= perfexp/manager
RELEASE_K6_REPO ?= perfexp/k6

##@ Release

.PHONY: release
release: $(HELM) ## Build the release's artifacts into dist/ (VERSION=x.y.z): images, chart, plugin, krew manifest, CRDs, checksums; pin the version in Chart.yaml, the CI examples and CHANGELOG.md.
	@echo '$(VERSION)' | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$$' || \
	  { echo 'make release: VERSION=x.y.z (semver without v), got "$(VERSION)"' >&2; exit 2; }
	rm -rf $(DIST) && mkdir -p $(DIST)
	K6_VERSION=$(K6_VERSION) MANAGER_REPO=$(RELEASE_MANAGER_REPO) K6_REPO=$(RELEASE_K6_REPO) \
	  hack/images/release.sh $(VERSION) $(DIST)
	HELM=$(HELM) K6_VERSION=$(K6_VERSION) MANAGER_REPO=$(RELEASE_MANAGER_REPO) K6_REPO=$(RELEASE_K6_REPO) \
	  charts/package.sh $(VERSION) $(DIST)
	plugins/release.sh v$(VERSION) $(DIST)
	cd $(DIST) && rm -f SHA256SUMS && sha256sum $$(ls | sort) >SHA256SUMS
	hack/release-pin.sh $(VERSION) $(DIST)
	@echo "dist/ for $(VERSION):" && cd $(DIST) && ls -l | tail -n +2 | awk '{printf "  %10d  %s\n", $$5, $$9}'

.PHONY: release-tools-test
release-tools-test: ## Test the release's image writer (hack/images: reproducible multi-platform OCI archives).
	cd hack/images && GOFLAGS=-mod=mod go test . -count=1

.PHONY: release-check
release-check: $(HELM) ## Check dist/ before publishing (VERSION=x.y.z): checksums, image archives against their digests, the chart, the CRDs, the krew manifest and plugin archives.
	@echo '$(VERSION)' | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$$' || \
	  { echo 'make release-check: VERSION=x.y.z (semver without v), got "$(VERSION)"' >&2; exit 2; }
	HELM=$(HELM) K6_VERSION=$(K6_VERSION) MANAGER_REPO=$(RELEASE_MANAGER_REPO) K6_REPO=$(RELEASE_K6_REPO) \
	  hack/release-check.sh $(VERSION) $(DIST)

.PHONY: release-install-check
release-install-check: release-check ## On the local cluster, from dist/ alone: import the images, install the packaged chart (namespaced), the plugin from its archive, run one experiment.
	KUBECONFIG=$(LOCAL_KUBECONFIG) HELM=$(HELM) K6_VERSION=$(K6_VERSION) hack/release-install-check.sh $(VERSION) $(DIST)

.PHONY: publish
publish: release-check ## Publish dist/ (VERSION=x.y.z, REGISTRY=ghcr.io/perfexp): images by digest, the chart (OCI), the signed tag, the GitHub release. DRY_RUN=1 prints the commands.
	HELM=$(HELM) K6_VERSION=$(K6_VERSION) REGISTRY=$(REGISTRY) DRY_RUN=$(DRY_RUN) hack/publish.sh $(VERSION) $(DIST)
