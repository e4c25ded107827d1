// Prints one plain closing line from vitest's JSON reports (one per phase of `npm test`):
// "vitest: N passed, N failed, N skipped". Exits 1 when a report is missing or no test ran (a suite
// that ran nothing is not green).
import { readFileSync } from 'node:fs';

let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of process.argv.slice(2)) {
  let report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    console.error(`orrery: no test report (${error.message})`);
    process.exit(1);
  }
  passed += report.numPassedTests ?? 0;
  // A file that failed before any test ran (an import error, say) counts as a failure too.
  const brokenFiles = (report.testResults ?? []).filter((f) => f.status === 'failed' && (f.assertionResults ?? []).length === 0).length;
  failed += (report.numFailedTests ?? 0) + brokenFiles;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
}
console.log(`vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`);
if (passed === 0 || failed > 0) process.exit(1);
