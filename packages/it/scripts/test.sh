#!/usr/bin/env bash
# `npm test`: sets up everything a fresh clone on a fresh machine needs, then runs every test of
# every package. Exits non-zero on any failure. Extra arguments go to vitest (e.g. a file filter).
set -euo pipefail
cd "$(dirname "$0")/../../.."

node packages/it/scripts/check-node.mjs

# 1. npm dependencies (the zookeeper package builds its native addon here, with node-gyp).
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] \
   || ! node -e "require('zookeeper')" >/dev/null 2>&1; then
  echo "orrery: installing npm dependencies (npm ci) ..." >&2
  npm ci --no-audit --no-fund
fi

# 2. ZooKeeper from Debian's package (tests start their own servers from its jars).
bash packages/it/scripts/ensure-zookeeper.sh

# 3. Type check, then every test.
echo "orrery: type-checking ..." >&2
npx --no-install tsc -p tsconfig.json
results=$(mktemp -t orrery-vitest-XXXXXX.json)
trap 'rm -f "$results"' EXIT
status=0
npx --no-install vitest run --reporter=default --reporter=json --outputFile.json="$results" "$@" || status=$?
node packages/it/scripts/test-summary.mjs "$results" || status=$((status == 0 ? 1 : status))
exit "$status"
