/**
 * The child process that learns which handlers `--jobs DIR` provides: it imports the candidate
 * files (with tsx registered by its parent's `--import tsx`, so `.ts` works) and reports each job's
 * name over the IPC channel. Job code — including whatever a module does when it is imported — thus
 * never runs in the executor's own process.
 *
 * The rule ({@link isJobFileCandidate}, docs/executor.md): a job is a top-level `.ts`, `.mts`, `.js`
 * or `.mjs` file of the folder whose default export is a job made by `defineJob` (an object with a
 * `name` and a `run` function), and the job is known by that name. Every other module is a helper
 * (ignored), and files in subfolders, `*.d.ts`, `*.test.*` and names starting with `_` or `.` are
 * never imported here; a file that cannot be imported, or a job whose name is bad or taken, is
 * reported by name and reason, and the other jobs still load.
 *
 * Protocol: `node --import tsx job-discovery.(ts|js) DIR` → one IPC message (a {@link Discovery},
 * job-modules.ts checks it against its schema), then exit 0. Exit code 2 with a message on stderr
 * when DIR cannot be read.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isJobFileCandidate } from './job-file-rule.js';

// @orrery/core's JOB_NAME_PATTERN, not imported: loading the core here (through tsx) would add most
// of a second to every executor's start, for one regular expression.
const NAME = /^(?!__proto__$)[A-Za-z0-9_-]{1,64}$/;

/** A file of the folder that was meant to be a job and is not, and why. */
export interface JobFileProblem {
  file: string;
  reason: string;
}

/** What discovery reports. */
export interface Discovery {
  /** Job name and module path, in file-name order. */
  modules: Array<[name: string, path: string]>;
  /** Modules imported that are not jobs (helpers), by file name. */
  helpers: string[];
  problems: JobFileProblem[];
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

async function discover(dir: string): Promise<Discovery> {
  const root = resolve(dir);
  const files = readdirSync(root).filter(isJobFileCandidate).sort();
  const found = new Map<string, string>();
  const helpers: string[] = [];
  const problems: JobFileProblem[] = [];
  for (const file of files) {
    const path = join(root, file);
    try {
      if (!statSync(path).isFile()) continue;
    } catch {
      continue; // removed meanwhile
    }
    let mod: { default?: { name?: unknown; run?: unknown } };
    try {
      mod = (await import(pathToFileURL(path).href)) as typeof mod;
    } catch (error) {
      problems.push({ file, reason: `cannot be imported: ${message(error)}` });
      continue;
    }
    const job = mod.default;
    if (!job || typeof job !== 'object' || typeof job.run !== 'function') {
      helpers.push(file);
    } else if (typeof job.name !== 'string' || !NAME.test(job.name)) {
      problems.push({ file, reason: `name '${String(job.name)}' must match ${NAME.source}` });
    } else if (found.has(job.name)) {
      problems.push({ file, reason: `name '${job.name}' is also defined by ${found.get(job.name)}` });
    } else found.set(job.name, path);
  }
  return { modules: [...found], helpers, problems };
}

const dir = process.argv[2];
if (!dir || !process.send) {
  process.stderr.write('usage: node --import tsx job-discovery.js DIR (with an IPC channel)\n');
  process.exit(2);
}
let result: Discovery;
try {
  result = await discover(dir);
} catch (error) {
  process.stderr.write(`cannot read the folder (${message(error)})\n`);
  process.exit(2);
}
process.send(result, () => process.exit(0));
