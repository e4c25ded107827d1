#!/usr/bin/env bash
# Sourced by the npm scripts (test, bench, chaos): what a fresh clone on a fresh machine needs —
# a supported Node, the npm dependencies, Debian's zookeeper package (and chromium for the tests). Runs from the repo root.

node packages/it/scripts/check-node.mjs

# npm dependencies (the zookeeper package builds its native addon here, with node-gyp).
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] \
   || ! node -e "require('zookeeper')" >/dev/null 2>&1; then
  echo "orrery: installing npm dependencies (npm ci) ..." >&2
  npm ci --no-audit --no-fund
fi
# Orrery's patch to the zookeeper package's addon (postinstall applies it; this catches an install
# made with --ignore-scripts). Patches and rebuilds only when needed.
node packages/it/scripts/zookeeper-addon.mjs

# ZooKeeper from Debian's package (tests and benchmarks start their own servers from its jars).
bash packages/it/scripts/ensure-zookeeper.sh

# Chromium from Debian's package, for the console's browser tests (playwright-core drives it);
# `npm test` and `npm run bench` ask for it (ORRERY_NEEDS_CHROMIUM=1, set by test.sh and bench.sh).
if [ "${ORRERY_NEEDS_CHROMIUM:-0}" = 1 ]; then
  bash packages/it/scripts/ensure-debian-package.sh chromium /usr/bin/chromium Chromium
  # A CJK font, so the Chinese pages' screenshots show characters rather than empty boxes.
  bash packages/it/scripts/ensure-debian-package.sh fonts-wqy-microhei /usr/share/fonts/truetype/wqy/wqy-microhei.ttc 'a Chinese font'
fi

# Bundle the bins (they run the bundle while it is fresh; packages/core/launch.mjs).
node packages/it/scripts/build.mjs

# The console UI's bundle (orrery-console serves it at /), when missing or older than its sources.
bash packages/console-ui/scripts/build.sh
