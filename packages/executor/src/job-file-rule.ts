/**
 * Which files of `--jobs DIR` may be jobs. A job is a top-level `.ts`, `.mts`, `.js` or `.mjs` file
 * whose default export is a job made by `defineJob`; every other module is a helper. This module
 * holds the part of the rule that needs no import: files in subfolders, `*.d.ts`, `*.test.*` and
 * names starting with `_` or `.` are never jobs (nor imported to find out).
 */

/** The extensions of job modules. */
export const JOB_FILE_EXTENSION = /\.(ts|mts|js|mjs)$/;
/** Declarations and tests: never jobs. */
const NEVER_A_JOB = /(\.d\.[mc]?ts|\.test\.[mc]?[jt]s)$/;

/** True when a top-level file of the jobs folder named `file` may be a job (the rest never are). Pure. */
export function isJobFileCandidate(file: string): boolean {
  return JOB_FILE_EXTENSION.test(file) && !NEVER_A_JOB.test(file) && !file.startsWith('_') && !file.startsWith('.');
}
