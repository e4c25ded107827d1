#!/usr/bin/env bash
# `npm start`: runs Orrery locally. Today: a real ZooKeeper (Debian's package) on a free loopback
# port, with the `demo` namespace and its jobs applied. The allocator, an executor and the console
# join this script as their issues land.
set -euo pipefail
cd "$(dirname "$0")/../../.."
node packages/it/scripts/check-node.mjs
if [ ! -f node_modules/.package-lock.json ] || ! node -e "require('zookeeper')" >/dev/null 2>&1; then
  echo "orrery: installing npm dependencies (npm ci) ..." >&2
  npm ci --no-audit --no-fund
fi
bash packages/it/scripts/ensure-zookeeper.sh
node packages/it/scripts/build.mjs
# The workspace's packages from their sources, here and in the processes this starts (packages/core/launch.mjs).
export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--conditions=@orrery/source"
exec node --import tsx packages/it/scripts/start.ts "$@"
