#!/usr/bin/env bash
# `npm start`: runs the whole platform locally — ZooKeeper (data kept in .orrery/), the allocator,
# an executor per namespace, the console and the demo jobs (see start.ts). Installs what is missing
# first: the npm dependencies and Debian's zookeeper; builds the bins and the console UI.
set -euo pipefail
cd "$(dirname "$0")/../../.."
node packages/it/scripts/check-node.mjs
if [ ! -f node_modules/.package-lock.json ] || ! node -e "require('zookeeper')" >/dev/null 2>&1; then
  echo "orrery: installing npm dependencies (npm ci) ..." >&2
  npm ci --no-audit --no-fund
fi
bash packages/it/scripts/ensure-zookeeper.sh
node packages/it/scripts/build.mjs
bash packages/console-ui/scripts/build.sh
# The workspace's packages from their sources, here and in the processes this starts (packages/core/launch.mjs).
export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--conditions=@orrery/source"
exec node --import tsx packages/it/scripts/start.ts "$@"
