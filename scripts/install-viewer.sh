#!/bin/sh
# Installs what the graph viewer's browser test (tests/check_viewer.py, meson suite `viewer`)
# drives Chromium with: playwright-core from npm into $OM_VIEWER_DIR (default
# ~/.cache/om-viewer, where the test looks; PLAYWRIGHT_CORE=path overrides it there). Chromium
# itself is Debian's (scripts/test.sh: install-deps.sh chromium). playwright-core downloads no
# browser (--ignore-scripts too); the test launches /usr/bin/chromium headless.
#   usage: install-viewer.sh
set -eu
dir="${OM_VIEWER_DIR:-$HOME/.cache/om-viewer}"
if [ -d "$dir/node_modules/playwright-core" ]; then
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "install-viewer: no npm (apt-get install npm): the viewer test will skip"
	exit 1
fi
mkdir -p "$dir"
(cd "$dir" && npm install --silent --no-audit --no-fund --ignore-scripts \
	playwright-core@1.65.2 >/dev/null)
echo "install-viewer: playwright-core 1.65.2 in $dir"
