# The demo PerfSweep on the local cluster. Included by the main Makefile (hack/make/*.mk).

.PHONY: demo-sweep
demo-sweep: ## Local cluster + operator + demo app + the demo PerfSweep (HTTP_MAXPOOLSIZE 1/10/50 x 2); waits and prints the sweep table.
	LOCALBIN=$(LOCALBIN) hack/local-cluster.d/demo-sweep.sh

.PHONY: demo-sweep-reset
demo-sweep-reset: ## Delete the demo PerfSweep (its runs restore the environment first) so the next `make demo-sweep` runs it again.
	kubectl --kubeconfig $(LOCAL_KUBECONFIG) -n perfexp-demo delete --ignore-not-found --timeout=600s perfsweep demo-pool

.PHONY: demo-aa
demo-aa: ## The A/A + A/B sweep (scenarios/demo-aa): 4 arms that change nothing and one that throttles, x3; prints the table.
	LOCALBIN=$(LOCALBIN) DEMO_SWEEP_DIR=scenarios/demo-aa DEMO_SWEEP_NAME=demo-aa-ab DEMO_SWEEP_TIMEOUT=2700 hack/local-cluster.d/demo-sweep.sh

.PHONY: demo-aa-one-run
demo-aa-one-run: ## The A/A + A/B sweep with one run per arm and no calibration (scenarios/demo-aa-one-run): no-op arms claim nothing, the throttled one reads Regressed.
	LOCALBIN=$(LOCALBIN) DEMO_SWEEP_DIR=scenarios/demo-aa-one-run DEMO_SWEEP_NAME=demo-aa-one-run DEMO_SWEEP_TIMEOUT=1200 hack/local-cluster.d/demo-sweep.sh

.PHONY: demo-aa-sequential
demo-aa-sequential: ## The A/A + A/B sweep run sequentially (scenarios/demo-aa-sequential): 2 repeats, then one at a time until every arm is decisive or 6 ran; every run on fresh pods (podAge Equal, settle 30s).
	LOCALBIN=$(LOCALBIN) DEMO_SWEEP_DIR=scenarios/demo-aa-sequential DEMO_SWEEP_NAME=demo-aa-sequential DEMO_SWEEP_TIMEOUT=5400 hack/local-cluster.d/demo-sweep.sh

.PHONY: demo-aa-sequential-noisy
demo-aa-sequential-noisy: ## demo-aa-sequential with a noisy neighbour: a pod spinning on one core while the runs of repeats 2 and 4 are in the environment (DEMO_SWEEP_BURN_REPEATS).
	LOCALBIN=$(LOCALBIN) DEMO_SWEEP_DIR=scenarios/demo-aa-sequential DEMO_SWEEP_NAME=demo-aa-sequential DEMO_SWEEP_TIMEOUT=5400 DEMO_SWEEP_RESET=1 DEMO_SWEEP_BURN_REPEATS="$(or $(DEMO_SWEEP_BURN_REPEATS),2 4)" hack/local-cluster.d/demo-sweep.sh

.PHONY: demo-aa-one-run-calibrated
demo-aa-one-run-calibrated: ## demo-aa-one-run with a calibration of this environment (scenarios/demo-aa-one-run-calibrated: spec.analysis.betweenRun from demo-aa-sequential's report).
	LOCALBIN=$(LOCALBIN) DEMO_SWEEP_DIR=scenarios/demo-aa-one-run-calibrated DEMO_SWEEP_NAME=demo-aa-one-run-calibrated DEMO_SWEEP_TIMEOUT=1200 DEMO_SWEEP_RESET=1 hack/local-cluster.d/demo-sweep.sh
