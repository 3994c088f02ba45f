# Screenshots of the HTML report for docs/report.md. Included by the main Makefile (hack/make/*.mk).

CHROMIUM ?= chromium

.PHONY: report-screenshots
report-screenshots: ## Render the report fixtures (internal/report/testdata) and screenshot them with headless Chromium into docs/images.
	@command -v $(CHROMIUM) >/dev/null 2>&1 || { echo "report-screenshots: $(CHROMIUM) not found; install Debian's chromium package (apt-get install chromium) or set CHROMIUM=/path/to/chromium" >&2; exit 1; }
	CHROMIUM=$(CHROMIUM) hack/report-screenshot.sh
