# perfexp: a Kubernetes operator for declarative performance experiments.
# Every tool is pinned and installed into ./bin by the target that needs it.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

LOCALBIN ?= $(shell pwd)/bin
TOOLS ?= $(LOCALBIN)/tools

## Tool versions
CONTROLLER_TOOLS_VERSION ?= v0.21.0
GOLANGCI_LINT_VERSION ?= v2.15.0
KUBE_VERSION ?= v1.36.3

CONTROLLER_GEN ?= $(TOOLS)/controller-gen-$(CONTROLLER_TOOLS_VERSION)/controller-gen
GOLANGCI_LINT ?= $(TOOLS)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint
KUBE_BIN_DIR ?= $(LOCALBIN)/k8s/$(KUBE_VERSION)
K6 ?= $(LOCALBIN)/k6

IMG ?= perfexp/manager:dev

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRD and RBAC manifests from the Go types and markers.
	$(CONTROLLER_GEN) rbac:roleName=perfexp-manager crd paths="./api/..." paths="./controllers/..." paths="./internal/..." output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: verify-gen
verify-gen: generate manifests helm-sync ## Fail if generated files (and the chart's copies of them) are not committed.
	@if [ -n "$$(git status --porcelain -- api config charts)" ]; then git status --short -- api config charts; git diff -- api config charts | head -50; \
	  echo "generated files are stale: run 'make generate manifests helm-sync' and commit"; exit 1; fi

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint.
	$(GOLANGCI_LINT) run ./...

.PHONY: test
test: generate manifests test-deps ## Run unit and integration tests (real kube-apiserver, etcd, Prometheus and k6).
	KUBEBUILDER_ASSETS="$(KUBE_BIN_DIR)" K6="$(K6)" go test ./... -count=1 -timeout 30m

.PHONY: test-property
test-property: test-deps ## The API property test at length: PROPERTY_SPECS random specs (default 400), a random seed unless PROPERTY_SEED is set.
	KUBEBUILDER_ASSETS="$(KUBE_BIN_DIR)" PERFEXP_PROPERTY_SPECS=$${PROPERTY_SPECS:-400} PERFEXP_PROPERTY_SEED=$${PROPERTY_SEED:-$$(od -An -N3 -tu4 /dev/urandom | tr -d ' ')} \
		go test ./controllers -run TestRandomSpecsAreRefusedOrEndWithTheEnvironmentUnchanged -count=1 -v -timeout 60m

# The fuzz targets, as package:Target; `make fuzz` runs each for FUZZTIME (a duration, or Nx for
# N inputs) with FUZZ_WORKERS workers. Their seeds and the inputs in each package's
# testdata/fuzz run as plain tests in `make test`.
FUZZ_TARGETS ?= ./controllers:FuzzExperimentSpec ./controllers:FuzzSweepSpec ./internal/analysis:FuzzRenderQuery
FUZZTIME ?= 60s
FUZZ_WORKERS ?= 2

.PHONY: fuzz
fuzz: ## Fuzz every target for FUZZTIME (default 60s) each; a failing input is written to the package's testdata/fuzz.
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "fuzzing $${t#*:} in $${t%%:*} for $(FUZZTIME)"; \
	  go test "$${t%%:*}" -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) -parallel $(FUZZ_WORKERS); \
	done

# The fuzz targets at length, never in `make test`: FUZZ_LONG_TIME each (default 20m, about an
# hour for the three) with FUZZ_LONG_WORKERS workers (default 1: the machine is shared). What the
# fuzzer learned stays in Go's cache (`go env GOCACHE`/fuzz), so a second run goes on from the first.
FUZZ_LONG_TIME ?= 20m
FUZZ_LONG_WORKERS ?= 1

.PHONY: fuzz-long
fuzz-long: ## Fuzz every target for FUZZ_LONG_TIME (default 20m) each, one worker; failing inputs go to testdata/fuzz.
	$(MAKE) fuzz FUZZTIME=$(FUZZ_LONG_TIME) FUZZ_WORKERS=$(FUZZ_LONG_WORKERS)

# Where the benchmarks write their output; `make bench` turns every file of it into the table
# of docs/benchmarks.md (between <!-- bench:begin --> and <!-- bench:end -->).
BENCH_DIR ?= $(LOCALBIN)/bench

.PHONY: bench
bench: test-deps ## Run the benchmarks (the queue ones at full size, then every other one) and rewrite the table of docs/benchmarks.md.
	@mkdir -p "$(BENCH_DIR)"
	cat /proc/loadavg > "$(BENCH_DIR)/loadavg-before" 2>/dev/null || true
	$(run-bench-queue)
	KUBEBUILDER_ASSETS="$(KUBE_BIN_DIR)" K6="$(K6)" go test ./... -run '^$$' -bench . -skip '^BenchmarkQueue' -benchmem | tee "$(BENCH_DIR)/unit.txt"
	go run -C hack/benchtable . -doc "$(CURDIR)/docs/benchmarks.md" -load-before "$$(cat "$(BENCH_DIR)/loadavg-before" 2>/dev/null)" \
	  "$(BENCH_DIR)/queue.txt" "$(BENCH_DIR)/unit.txt" "$(BENCH_DIR)/e2e.txt"

# How many experiments each queue benchmark applies at once (they default to 100, for CI).
BENCH_QUEUE_EXPERIMENTS ?= 1000

define run-bench-queue
@mkdir -p "$(BENCH_DIR)"
PERFEXP_BENCH_EXPERIMENTS=$(BENCH_QUEUE_EXPERIMENTS) KUBEBUILDER_ASSETS="$(KUBE_BIN_DIR)" \
  go test ./controllers -run '^$$' -bench '^BenchmarkQueue' -benchtime=1x -timeout 60m | tee "$(BENCH_DIR)/queue.txt"
endef

# Sweeps per cell and rule of the per-arm stopping table (docs/comparison.md).
SIM_SEQ_N ?= 200

.PHONY: sim-table-sequential
sim-table-sequential: ## Simulate sequential sweeps with and without per-arm stopping (SIM_SEQ_N sweeps per cell and rule) and rewrite that table of docs/comparison.md (between <!-- seqsim:begin --> and <!-- seqsim:end -->); part of sim-table.
	@mkdir -p "$(LOCALBIN)"
	PERFEXP_SEQ_TABLE="$(LOCALBIN)/seq-table.md" PERFEXP_SIM_N=$(SIM_SEQ_N) go test ./internal/judge -run '^TestSequentialStoppingTable$$' -count=1 -timeout 60m
	awk -v table="$(LOCALBIN)/seq-table.md" '/<!-- seqsim:begin -->/ { print; while ((getline l < table) > 0) print l; skip = 1; next } \
	  /<!-- seqsim:end -->/ { skip = 0 } !skip' docs/comparison.md > docs/comparison.md.new && mv docs/comparison.md.new docs/comparison.md

# make sim-table also writes the per-arm stopping table.
sim-table: sim-table-sequential

# Comparisons per cell of the simulation table (docs/comparison.md).
SIM_N ?= 400
# Simulated histories (change points, docs/history.md) and soaks (leak verdict, docs/analysis.md) per case.
SIM_HISTORY_N ?= 1000
# Comparisons per row of the history-noise table (docs/comparison.md).
SIM_NOISE_N ?= 400

# The history-noise table: single-run comparisons whose between-run sd comes from a simulated
# PerfHistory segment, against the true sd, into docs/comparison.md (<!-- noisesim:begin/end -->).
define run-sim-noise-table
	@mkdir -p "$(LOCALBIN)"
	PERFEXP_NOISE_TABLE="$(LOCALBIN)/noise-table.md" PERFEXP_NOISE_N=$(SIM_NOISE_N) go test ./internal/judge -run '^TestHistoryNoiseSimulation$$' -count=1 -timeout 60m
	awk -v table="$(LOCALBIN)/noise-table.md" '/<!-- noisesim:begin -->/ { print; while ((getline l < table) > 0) print l; skip = 1; next } \
	  /<!-- noisesim:end -->/ { skip = 0 } !skip' docs/comparison.md > docs/comparison.md.new && mv docs/comparison.md.new docs/comparison.md
endef

# The designs sim-table-rows regenerates, separated by ";".
SIM_DESIGNS ?= sequential r3-10, 1 arm;sequential sweep r3-10
# The cells sim-table-rows regenerates (their names, separated by ";"); empty: every cell.
SIM_CELLS ?=

.PHONY: sim-table-rows
sim-table-rows: ## Simulate only the designs SIM_DESIGNS (of the cells SIM_CELLS, default all; SIM_N per cell, as sim-table) and replace their rows of the simulation table of docs/comparison.md, the other rows kept.
	@mkdir -p "$(LOCALBIN)"
	PERFEXP_SIM_TABLE="$(LOCALBIN)/sim-rows.md" PERFEXP_SIM_N=$(SIM_N) PERFEXP_SIM_DESIGNS="$(SIM_DESIGNS)" PERFEXP_SIM_CELLS="$(SIM_CELLS)" go test ./internal/judge -run '^TestSimulationTable$$' -count=1 -timeout 60m
	awk -F'|' -v rows="$(LOCALBIN)/sim-rows.md" 'BEGIN { while ((getline l < rows) > 0) { split(l, f, "|"); if (f[3] ~ /[a-z]/) row[f[2] "|" f[3]] = l } } \
	  /<!-- sim:begin -->/ { inside = 1 } /<!-- sim:end -->/ { inside = 0 } inside && (($$2 "|" $$3) in row) { print row[$$2 "|" $$3]; next } { print }' docs/comparison.md > docs/comparison.md.new && mv docs/comparison.md.new docs/comparison.md

.PHONY: sim-table
sim-table: ## Simulate the comparison rules with known truth (SIM_N per cell) and rewrite the table of docs/comparison.md (between <!-- sim:begin --> and <!-- sim:end -->); then the history-noise table (SIM_NOISE_N per row, sim-noise-table); then change points and leaks (SIM_HISTORY_N per case) into docs/history.md and docs/analysis.md.
	@mkdir -p "$(LOCALBIN)"
	PERFEXP_SIM_TABLE="$(LOCALBIN)/sim-table.md" PERFEXP_SIM_N=$(SIM_N) go test ./internal/judge -run '^TestSimulationTable$$' -count=1 -timeout 60m
	awk -v table="$(LOCALBIN)/sim-table.md" '/<!-- sim:begin -->/ { print; while ((getline l < table) > 0) print l; skip = 1; next } \
	  /<!-- sim:end -->/ { skip = 0 } !skip' docs/comparison.md > docs/comparison.md.new && mv docs/comparison.md.new docs/comparison.md
	$(run-sim-noise-table)
	PERFEXP_CP_TABLE="$(LOCALBIN)/cp-table.md" PERFEXP_CP_N=$(SIM_HISTORY_N) PERFEXP_LEAK_TABLE="$(LOCALBIN)/leak-table.md" PERFEXP_LEAK_N=$(SIM_HISTORY_N) \
	  go test ./internal/judge/history -run '^(TestChangePointSimulation|TestLeakSimulation)$$' -count=1 -timeout 30m
	awk -v table="$(LOCALBIN)/cp-table.md" '/<!-- cpsim:begin -->/ { print; while ((getline l < table) > 0) print l; skip = 1; next } \
	  /<!-- cpsim:end -->/ { skip = 0 } !skip' docs/history.md > docs/history.md.new && mv docs/history.md.new docs/history.md
	awk -v table="$(LOCALBIN)/leak-table.md" '/<!-- leaksim:begin -->/ { print; while ((getline l < table) > 0) print l; skip = 1; next } \
	  /<!-- leaksim:end -->/ { skip = 0 } !skip' docs/analysis.md > docs/analysis.md.new && mv docs/analysis.md.new docs/analysis.md

.PHONY: sim-noise-table
sim-noise-table: ## Simulate single-run comparisons whose between-run sd comes from a PerfHistory segment of 3-20 runs, against the true sd (SIM_NOISE_N per row), into docs/comparison.md (between <!-- noisesim:begin --> and <!-- noisesim:end -->).
	$(run-sim-noise-table)

.PHONY: bench-queue
bench-queue: test-deps ## Run the queue benchmarks (envtest): BENCH_QUEUE_EXPERIMENTS (1000) into one queue, into queues of 10, and the bare status-write floor.
	$(run-bench-queue)

.PHONY: bench-e2e
bench-e2e: cluster-up images ## Run the local-cluster benchmarks (e2e tag) into BENCH_DIR/e2e.txt; the next `make bench` lists them.
	@mkdir -p "$(BENCH_DIR)"
	KUBECONFIG=$(LOCAL_KUBECONFIG) LOCALBIN=$(LOCALBIN) go test -tags e2e -run '^$$' -bench . -benchtime 5x -timeout 60m ./test/e2e/ | tee "$(BENCH_DIR)/e2e.txt"

##@ Build

.PHONY: build
build: generate ## Build the manager and the kubectl plugin into bin/.
	CGO_ENABLED=0 go build -o $(LOCALBIN)/manager ./cmd/manager
	CGO_ENABLED=0 go build -o $(LOCALBIN)/kubectl-perfexp ./cmd/kubectl-perfexp

.PHONY: run
run: manifests generate ## Run the manager against the current kubeconfig (flags in ARGS="...").
	go run ./cmd/manager $(ARGS)

##@ Deployment

.PHONY: install
install: manifests ## Install the CRDs into the cluster of the current kubeconfig.
	kubectl apply --server-side -k config/crd

.PHONY: uninstall
uninstall: manifests ## Remove the CRDs from the cluster.
	kubectl delete --ignore-not-found -k config/crd

.PHONY: deploy
deploy: manifests ## Deploy the operator with kustomize (config/default).
	kubectl apply --server-side -k config/default

.PHONY: undeploy
undeploy: ## Remove the operator.
	kubectl delete --ignore-not-found -k config/default

##@ Tools

.PHONY: test-deps
test-deps: envtest-binaries ## Provide everything the tests start: kube-apiserver, etcd, Prometheus, k6.
	hack/test-deps.sh
	hack/k6.sh >/dev/null

.PHONY: envtest-binaries
envtest-binaries: $(KUBE_BIN_DIR)/kube-apiserver $(KUBE_BIN_DIR)/etcd ## Provide kube-apiserver and etcd for envtest in bin/k8s.

$(KUBE_BIN_DIR)/kube-apiserver:
	KUBE_VERSION=$(KUBE_VERSION) hack/kube-binaries.sh kube-apiserver

$(KUBE_BIN_DIR)/etcd:
	hack/etcd.sh "$(KUBE_BIN_DIR)"

$(CONTROLLER_GEN):
	GOBIN=$(dir $@) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)

$(GOLANGCI_LINT):
	GOBIN=$(dir $@) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

-include hack/make/*.mk
