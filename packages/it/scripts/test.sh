#!/usr/bin/env bash
# `npm test`: sets up everything a fresh clone on a fresh machine needs, then runs every test of
# every package. Exits non-zero on any failure. Extra arguments go to vitest (e.g. a file filter).
set -euo pipefail
cd "$(dirname "$0")/../../.."

# 1–2. Node, npm dependencies, Debian's zookeeper and chromium (the console's browser tests).
ORRERY_NEEDS_CHROMIUM=1
source packages/it/scripts/prepare.sh
# Redis from Debian's package: the benchmarks' throwaway Redis (packages/it/src/redis.ts) is tested too.
bash packages/it/scripts/ensure-debian-package.sh redis-server /usr/bin/redis-server Redis

# 3. Type check, then every test.
echo "orrery: type-checking ..." >&2
npx --no-install tsc -p tsconfig.json
# Without arguments, two phases: everything but the chaos suite (two files at a time), then the
# chaos suite alone — it starts ZooKeeper ensembles and kills processes, and sharing two cores with
# it would make the timing of every other test depend on which of its scenarios ran beside them.
# With arguments (a file filter, say), one vitest run of what they select.
dir=$(mktemp -d -t orrery-vitest-XXXXXX)
# Every temporary folder of the run — the tests' own, and those of the ZooKeeper servers, executors
# and browsers they start — goes under one folder (TMPDIR, which os.tmpdir() and mktemp read): gone
# when the run passes, kept and named when it fails (its logs and data dirs are what to look at).
export TMPDIR="$dir/tmp"
mkdir "$TMPDIR"
status=0
finish() {
  if [ "$status" -eq 0 ]; then rm -rf "$dir"; else echo "orrery: the run's temporary files are kept in $TMPDIR" >&2; fi
}
trap finish EXIT
run() { # run REPORT [vitest arguments...]
  local report="$1"; shift
  npx --no-install vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?
}
chaos=packages/it/test/chaos.test.ts
if [ "$#" -eq 0 ]; then
  run "$dir/main.json" --exclude "$chaos"
  echo "orrery: the chaos suite, alone ..." >&2
  run "$dir/chaos.json" "$chaos"
  reports=("$dir/main.json" "$dir/chaos.json")
else
  run "$dir/selected.json" "$@"
  reports=("$dir/selected.json")
fi
node packages/it/scripts/test-summary.mjs "${reports[@]}" || status=$((status == 0 ? 1 : status))
exit "$status"
