/**
 * Loads Node job modules from `--jobs DIR`: every `.ts`, `.mts`, `.js` or `.mjs` file (not `.d.ts`
 * nor tests) whose default export has a `name` and a `run` function (what `defineJob` makes).
 * The names become the `handlers` the executor announces. Modules are imported once here to learn
 * their names; runs import them again in the worker processes.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { OrreryError, toError } from '@orrery/core';

/** Handler name → module path. */
export type JobModules = ReadonlyMap<string, string>;

const MODULE = /\.(ts|mts|js|mjs)$/;
const SKIP = /(\.d\.ts|\.test\.[mc]?[jt]s)$/;
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export async function loadJobModules(dir: string | undefined): Promise<JobModules> {
  const out = new Map<string, string>();
  if (!dir) return out;
  const root = resolve(dir);
  let files: string[];
  try {
    files = readdirSync(root).filter((f) => MODULE.test(f) && !SKIP.test(f)).sort();
  } catch (error) {
    throw new OrreryError('validation', `--jobs ${dir}: cannot read the folder (${toError(error).message})`);
  }
  const problems: string[] = [];
  for (const file of files) {
    const path = join(root, file);
    if (!statSync(path).isFile()) continue;
    let mod: { default?: { name?: unknown; run?: unknown } };
    try {
      mod = (await import(pathToFileURL(path).href)) as typeof mod;
    } catch (error) {
      problems.push(`${file}: cannot be imported: ${toError(error).message}`);
      continue;
    }
    const job = mod.default;
    if (!job || typeof job.run !== 'function' || typeof job.name !== 'string') {
      problems.push(`${file}: its default export must be defineJob({ name, run })`);
      continue;
    }
    if (!NAME.test(job.name)) {
      problems.push(`${file}: name '${job.name}' must match ${NAME.source}`);
      continue;
    }
    if (out.has(job.name)) {
      problems.push(`${file}: name '${job.name}' is also defined by ${out.get(job.name)}`);
      continue;
    }
    out.set(job.name, path);
  }
  if (problems.length > 0) throw new OrreryError('validation', `--jobs ${dir}: ${problems.join('; ')}`, { details: { problems } });
  return out;
}
