#!/usr/bin/env bash
# Builds the console UI (Vite) into packages/console-ui/dist/ when it is missing or older than any
# of its sources (the UI's own and core's, whose schemas it bundles); `--force` builds it anyway.
# Prints one line; Vite's output only when the build fails. Runs from the repo root.
set -euo pipefail
ui=packages/console-ui
stamp="$ui/dist/index.html"
if [ "${1:-}" != "--force" ] && [ -f "$stamp" ] \
   && [ -z "$(find "$ui/src" "$ui/index.html" "$ui/vite.config.ts" "$ui/package.json" packages/core/src \
                -newer "$stamp" -type f ! -name '*.test.ts' ! -name '*.test.tsx' -print -quit)" ]; then
  exit 0
fi
log=$(mktemp -t orrery-ui-build-XXXXXX)
trap 'rm -f "$log"' EXIT
if (cd "$ui" && npx --no-install vite build) >"$log" 2>&1; then
  size=$(grep -Eo 'gzip: +[0-9.]+ kB' "$log" | awk '{ s += $2 } END { printf "%.0f", s }')
  echo "orrery: built the console UI into $ui/dist (${size} kB gzipped)" >&2
else
  cat "$log" >&2
  echo "orrery: building the console UI failed (above)" >&2
  exit 1
fi
