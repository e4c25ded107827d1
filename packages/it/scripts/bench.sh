#!/usr/bin/env bash
# `npm run bench [NAME]`: runs the benchmarks (after the same set-up as npm test) and prints
# Markdown tables; BENCHMARKS.md records a run of them.
set -euo pipefail
cd "$(dirname "$0")/../../.."
node packages/it/scripts/check-node.mjs
if [ ! -f node_modules/.package-lock.json ] || ! node -e "require('zookeeper')" >/dev/null 2>&1; then
  npm ci --no-audit --no-fund
fi
bash packages/it/scripts/ensure-zookeeper.sh
exec node --import tsx packages/it/bench/run.ts "$@"
