#!/usr/bin/env bash
# Copies the console's screenshots that docs/console-tour.md shows from the last browser test run
# (test-output/screenshots/, written by `npm test` — console-ui-e2e.test.ts) into
# docs/images/console/. Run after a test run whenever the UI changed, and commit the images.
set -euo pipefail
cd "$(dirname "$0")/../../.."
from=test-output/screenshots
to=docs/images/console
shots="login namespaces dashboard jobs job-editor job-detail-shards job-detail-runs job-detail-log-live job-detail-history executors-drain-preview assignment audit users tokens zh-dashboard zh-jobs zh-job-detail zh-executors zh-assignment"
mkdir -p "$to"
missing=0
for shot in $shots; do
  if [ -f "$from/$shot-1000.png" ]; then cp "$from/$shot-1000.png" "$to/$shot.png"; else echo "missing: $from/$shot-1000.png" >&2; missing=1; fi
done
[ "$missing" -eq 0 ] || { echo "run npm test (the console's browser test) first" >&2; exit 1; }
echo "copied $(echo $shots | wc -w) screenshots into $to"
