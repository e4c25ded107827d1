#!/usr/bin/env bash
# `npm run chaos [ROUNDS]`: the longer chaos sweep — the chaos suite (packages/it/test/chaos.test.ts)
# run ROUNDS times in a row (default 5; each round hits its faults at other moments of the runs),
# stopping at the first failing round. `npm test` runs it once.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source packages/it/scripts/prepare.sh
rounds="${1:-${ORRERY_CHAOS_ROUNDS:-5}}"
for round in $(seq 1 "$rounds"); do
  echo "== chaos round $round of $rounds"
  log="$(mktemp)"
  if npx vitest run packages/it/test/chaos.test.ts >"$log" 2>&1; then status=0; else status=$?; fi
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '\[chaos\]|Tests ' | sed 's/^.*\[chaos\]/[chaos]/' || true
  if [ "$status" -ne 0 ]; then
    echo "chaos round $round failed; its log: $log"
    exit "$status"
  fi
  rm -f "$log"
done
echo "chaos: $rounds rounds passed"
