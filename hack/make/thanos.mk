# Thanos, built from its Go module, as the distributed backend perfexp's analysis is tested
# against (docs/backends.md): the separate Go module hack/thanos pins it (a `tool` directive,
# with Thanos' own replace directives), so Thanos' dependencies stay out of perfexp's module,
# out of `./...` and out of `make test`. Included by the main Makefile (hack/make/*.mk).

THANOS_MODULE := hack/thanos
THANOS_VERSION ?= $(shell sed -n 's|^[[:space:]]*github.com/thanos-io/thanos \(v[^ ]*\).*$$|\1|p' $(THANOS_MODULE)/go.mod)
THANOS ?= $(LOCALBIN)/thanos/$(THANOS_VERSION)/thanos

##@ Distributed backends

# Built once per version and kept under $(LOCALBIN): the first build compiles Thanos and its
# dependencies (about 20 minutes on 2 shared cores, hence nice). -mod=readonly: go.sum as
# committed. The tags and version flags are those of Thanos' own build (.promu.yml):
# slicelabels is required, Thanos' label protobufs cast Prometheus' labels.Labels as a slice,
# and without the tag (Prometheus' default is stringlabels) Receive panics on its first gRPC
# Info answer.
$(THANOS): $(THANOS_MODULE)/go.mod $(THANOS_MODULE)/go.sum
	@mkdir -p "$(dir $@)"
	@echo "building Thanos $(THANOS_VERSION); 20 minutes or more on 2 shared cores when cold..."
	cd $(THANOS_MODULE) && GOFLAGS=-mod=readonly nice -n 10 go build -tags netgo,slicelabels -o "$@.tmp" \
		-ldflags "-s -w -X github.com/prometheus/common/version.Version=$(THANOS_VERSION:v%=%) -X github.com/prometheus/common/version.Revision=$(THANOS_VERSION) -X github.com/prometheus/common/version.Branch=perfexp-hack-thanos" \
		github.com/thanos-io/thanos/cmd/thanos
	mv "$@.tmp" "$@"

.PHONY: thanos
thanos: $(THANOS) ## Build Thanos (from its Go module, hack/thanos) into bin/thanos/<version>/ unless it is there.

# Receive x2 (replication factor 2), Query (dedup on receive_replica), Query Frontend, as
# local processes beside a plain Prometheus; real k6 writes to both (test/thanos).
.PHONY: e2e-thanos
e2e-thanos: $(THANOS) ## Run the same k6 run against Thanos (Receive x2, Query, Query Frontend) and Prometheus, analysed from both.
	hack/test-deps.sh
	hack/k6.sh >/dev/null
	"$(THANOS)" --version 2>&1 | sed -n 1p
	THANOS="$(THANOS)" K6="$(K6)" go test -tags thanos_e2e ./test/thanos/ -count=1 -v -timeout 15m
