#!/usr/bin/env bash
# `npm run bench [NAME]`: runs the benchmarks (after the same set-up as npm test) and prints
# Markdown tables; BENCHMARKS.md records a run of them.
set -euo pipefail
cd "$(dirname "$0")/../../.."
# Chromium too: the console bench times the UI's jobs page in it.
export ORRERY_NEEDS_CHROMIUM=1
source packages/it/scripts/prepare.sh
# Redis from Debian's package, for the BullMQ comparison (the bench starts its own server on a free port).
bash packages/it/scripts/ensure-debian-package.sh redis-server /usr/bin/redis-server Redis
# The workspace's packages from their sources, here and in the processes this starts (packages/core/launch.mjs).
export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--conditions=@orrery/source"
exec node --import tsx packages/it/bench/run.ts "$@"
