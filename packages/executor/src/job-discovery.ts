/**
 * The child process that learns which handlers `--jobs DIR` provides: it imports every job module
 * (with tsx registered by its parent's `--import tsx`, so `.ts` works) and reports each default
 * export's name over the IPC channel. Job code — including whatever a module does when it is
 * imported — thus never runs in the executor's own process.
 *
 * Protocol: `node --import tsx job-discovery.(ts|js) DIR` → one IPC message
 * `{ modules: [[name, path], ...], problems: [string, ...] }`, then exit 0. Exit code 2 with a
 * message on stderr when DIR cannot be read.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const MODULE = /\.(ts|mts|js|mjs)$/;
const SKIP = /(\.d\.ts|\.test\.[mc]?[jt]s)$/;
// @orrery/core's JOB_NAME_PATTERN, not imported: loading the core here (through tsx) would add most
// of a second to every executor's start, for one regular expression.
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** What discovery reports. */
export interface Discovery {
  modules: Array<[name: string, path: string]>;
  problems: string[];
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

async function discover(dir: string): Promise<Discovery> {
  const root = resolve(dir);
  const files = readdirSync(root).filter((f) => MODULE.test(f) && !SKIP.test(f)).sort();
  const found = new Map<string, string>();
  const problems: string[] = [];
  for (const file of files) {
    const path = join(root, file);
    if (!statSync(path).isFile()) continue;
    let mod: { default?: { name?: unknown; run?: unknown } };
    try {
      mod = (await import(pathToFileURL(path).href)) as typeof mod;
    } catch (error) {
      problems.push(`${file}: cannot be imported: ${message(error)}`);
      continue;
    }
    const job = mod.default;
    if (!job || typeof job.run !== 'function' || typeof job.name !== 'string') {
      problems.push(`${file}: its default export must be defineJob({ name, run })`);
    } else if (!NAME.test(job.name)) {
      problems.push(`${file}: name '${job.name}' must match ${NAME.source}`);
    } else if (found.has(job.name)) {
      problems.push(`${file}: name '${job.name}' is also defined by ${found.get(job.name)}`);
    } else found.set(job.name, path);
  }
  return { modules: [...found], problems };
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
