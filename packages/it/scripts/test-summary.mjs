// Prints one plain closing line from vitest's JSON report: "vitest: N passed, N failed, N skipped".
// Exits 1 when the report is missing or no test ran (a suite that ran nothing is not green).
import { readFileSync } from 'node:fs';

let report;
try {
  report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
} catch (error) {
  console.error(`orrery: no test report (${error.message})`);
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
const failed = (report.numFailedTests ?? 0) + (report.numFailedTestSuites ?? 0 ? 0 : 0);
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
const brokenFiles = (report.testResults ?? []).filter((f) => f.status === 'failed' && (f.assertionResults ?? []).length === 0).length;
console.log(`vitest: ${passed} passed, ${failed + brokenFiles} failed, ${skipped} skipped`);
if (passed === 0 || failed + brokenFiles > 0) process.exit(1);
