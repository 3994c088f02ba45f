#!/usr/bin/env bash
# Renders the HTML report of the fixtures in internal/report/testdata (a run with its baseline,
# and a sweep) and photographs each page with headless Chromium, for docs/report.md.
#
#   hack/report-screenshot.sh            # writes docs/images/report-run.png, report-sweep.png
#   CHROMIUM=/path/to/chromium OUT=/tmp hack/report-screenshot.sh
#
# Installs nothing: Chromium is Debian's chromium package.
set -euo pipefail
cd "$(dirname "$0")/.."

chromium=${CHROMIUM:-chromium}
if ! command -v "$chromium" >/dev/null 2>&1; then
	echo "report-screenshot: $chromium not found: install Debian's chromium package or set CHROMIUM" >&2
	exit 1
fi
out=${OUT:-docs/images}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go run ./hack/report-html -testdata internal/report/testdata -out "$work"

# shoot PAGE PNG HEIGHT: one page at 1200 px wide, HEIGHT px tall, from a fresh profile that
# reaches nothing on the network (the page is self-contained; nothing should be fetched).
shoot() {
	local profile
	profile=$(mktemp -d -p "$work")
	if ! "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--hide-scrollbars --user-data-dir="$profile" --window-size="1200,$3" \
		--screenshot="$2" "file://$work/$1" >"$work/chromium.log" 2>&1; then
		cat "$work/chromium.log" >&2
		echo "report-screenshot: chromium failed on $1" >&2
		exit 1
	fi
	go run ./hack/report-html -shrink "$2"
	echo "wrote $2 ($(wc -c <"$2") bytes)"
}
shoot run.html "$out/report-run.png" "${RUN_HEIGHT:-4800}"
shoot sweep.html "$out/report-sweep.png" "${SWEEP_HEIGHT:-1500}"
