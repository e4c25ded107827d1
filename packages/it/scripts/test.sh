#!/usr/bin/env bash
# `npm test`: sets up everything a fresh clone on a fresh machine needs, then runs every test of
# every package. Exits non-zero on any failure. Extra arguments go to vitest (e.g. a file filter).
set -euo pipefail
cd "$(dirname "$0")/../../.."

# 1–2. Node, npm dependencies, Debian's zookeeper.
source packages/it/scripts/prepare.sh

# 3. Type check, then every test.
echo "orrery: type-checking ..." >&2
npx --no-install tsc -p tsconfig.json
results=$(mktemp -t orrery-vitest-XXXXXX.json)
trap 'rm -f "$results"' EXIT
status=0
npx --no-install vitest run --reporter=default --reporter=json --outputFile.json="$results" "$@" || status=$?
node packages/it/scripts/test-summary.mjs "$results" || status=$((status == 0 ? 1 : status))
exit "$status"
