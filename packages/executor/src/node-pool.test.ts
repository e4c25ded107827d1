// The Node pool with real worker processes: ownership reaching ctx.isOwner(), ctx.log's timestamps,
// malformed messages from a job, hot reload (pool.reload and the folder watch), and a jobs folder
// with helpers and a broken file. (Dispatch, stops and timeouts: runners.test.ts.)
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Logger } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { createJobFolderWatch } from './job-folder-watch.js';
import { loadJobModules } from './job-modules.js';
import { createNodePool, type NodeRunSpec } from './node-pool.js';
import { MAX_ID_LENGTH, MAX_TEXT_LENGTH } from './node-protocol.js';

const dir = mkdtempSync(join(tmpdir(), 'orrery-node-pool-'));
let n = 0;
const io = (): Pick<NodeRunSpec, 'stdoutPath' | 'stderrPath' | 'timeoutMs' | 'killGraceMs'> => {
  n += 1;
  return { stdoutPath: join(dir, `${n}.out`), stderrPath: join(dir, `${n}.err`), timeoutMs: 0, killGraceMs: 500 };
};
const fixture = (name: string): string => fileURLToPath(new URL(`../test/fixtures/node-pool/${name}`, import.meta.url));
const lines = (path: string): string[] => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);
const capture = (): { logger: Logger; lines: Array<Record<string, unknown>> } => {
  const out: Array<Record<string, unknown>> = [];
  return { lines: out, logger: pino({ level: 'debug' }, { write: (line: string) => { out.push(JSON.parse(line) as Record<string, unknown>); } }) };
};

/** A jobs folder outside the workspace: plain modules whose default export has the shape defineJob gives. */
function jobsDir(files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), 'orrery-jobs-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(d, name), text);
  return d;
}
const versioned = (name: string, version: string): string => `export default { name: '${name}', run: () => ({ message: '${version}' }) };\n`;

describe('ownership', () => {
  const pool = createNodePool({ min: 1, max: 2 });
  afterAll(() => pool.close());

  it('turns ctx.isOwner() false in a running job when the executor says so', async () => {
    const seen = join(dir, 'owner-running.txt');
    const run = pool.run({ ...io(), runId: 'own-1', module: fixture('polls-owner.ts'), context: { jobParam: seen } });
    await eventually(() => expect(lines(seen)).toEqual(['start owner=true']), { timeoutMs: 15_000 });
    run.setOwner(false);
    const result = await run.done;
    expect(result).toMatchObject({ status: 'succeeded', message: 'saw it was no longer the owner' });
    expect(lines(seen)).toEqual(['start owner=true', 'owner=false']);
  });

  it('keeps what the executor said for a run still waiting in a worker', async () => {
    const seen = join(dir, 'owner-waiting.txt');
    // Handed to a worker at once, started there 600 ms later: the word arrives before it starts.
    const run = pool.run({ ...io(), runId: 'own-2', module: fixture('polls-owner.ts'), context: { jobParam: seen }, startAt: Date.now() + 600 });
    run.setOwner(false);
    expect(await run.done).toMatchObject({ status: 'succeeded', message: 'saw it was no longer the owner' });
    expect(lines(seen)).toEqual(['start owner=false', 'owner=false']);
  });
});

describe('the worker process', () => {
  it('leads its own process group and holds none of the executor\'s secrets', async () => {
    // NODE_OPTIONS as the repository's tools set it: the fixture's `@orrery/executor` resolves to the
    // sources (without it, to a packed build that a fresh checkout does not have).
    const env = { PATH: process.env.PATH, NODE_OPTIONS: process.env.NODE_OPTIONS, HOME: '/home/x', ORRERY_CLUSTER_TOKEN: 'cluster-secret', ORRERY_ZK_AUTH: 'u:p', ORRERY_ADMIN_PASSWORD: 'admin-secret', SHOP_MODE: 'test' };
    const groups: number[] = [];
    const pool = createNodePool({ min: 1, max: 1, env, onWorker: (pgid) => groups.push(pgid) });
    try {
      const run = pool.run({ ...io(), runId: 'proc-1', module: fixture('reports-process.ts'), context: { jobParam: 'ORRERY_CLUSTER_TOKEN,ORRERY_ZK_AUTH,ORRERY_ADMIN_PASSWORD,SHOP_MODE,HOME' } });
      const result = await run.done;
      expect(result.status).toBe('succeeded');
      const seen = JSON.parse(result.message) as { pid: number; pgrp: number; env: Record<string, string | null> };
      expect(seen.env).toEqual({ ORRERY_CLUSTER_TOKEN: null, ORRERY_ZK_AUTH: null, ORRERY_ADMIN_PASSWORD: null, SHOP_MODE: 'test', HOME: '/home/x' });
      expect(seen.pgrp).toBe(seen.pid);
      expect(groups).toEqual([seen.pid]);
    } finally {
      await pool.close();
    }
  });
});

describe('ctx.log', () => {
  it('starts every line with an ISO 8601 UTC time and the level; console output is left as it is', async () => {
    const pool = createNodePool({ min: 1, max: 1 });
    try {
      const spec = io();
      const before = new Date().toISOString();
      const result = await pool.run({ ...spec, runId: 'log-1', module: fixture('logs-lines.ts'), context: {} }).done;
      const after = new Date().toISOString();
      expect(result.status).toBe('succeeded');
      const log = lines(spec.stdoutPath);
      const stamp = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) info (.*)$/;
      expect(log).toHaveLength(4);
      expect(log.slice(0, 3).map((l) => l.match(stamp)?.[2])).toEqual(['first 1', 'two', 'lines']);
      expect(log[3]).toBe('plain console line');
      for (const l of log.slice(0, 3)) {
        const at = l.match(stamp)![1]!;
        // Written during the run (ISO strings of one format compare as times).
        expect(at >= before && at <= after).toBe(true);
      }
      expect(result.stdoutTail).toBe(readFileSync(spec.stdoutPath, 'utf8'));
    } finally {
      await pool.close();
    }
  });
});

describe('messages from a worker', () => {
  it('logs and ignores malformed ones (a job can write to the channel), and the run ends normally', async () => {
    const { logger, lines: logged } = capture();
    const pool = createNodePool({ min: 1, max: 1, logger });
    try {
      const result = await pool.run({ ...io(), runId: 'garbage-1', module: fixture('sends-garbage.ts'), context: { runId: 'garbage-1' } }).done;
      expect(result).toMatchObject({ status: 'succeeded', message: 'still fine' });
      const warned = logged.filter((l) => l.msg === 'ignored a malformed message from a node job worker');
      expect(warned).toHaveLength(7);
      expect(warned.every((l) => typeof l.problem === 'string')).toBe(true);
      // The pool still runs the next one.
      expect((await pool.run({ ...io(), runId: 'garbage-2', module: fixture('logs-lines.ts'), context: {} }).done).status).toBe('succeeded');
    } finally {
      await pool.close();
    }
  });
});

describe('a long outcome message', () => {
  it('is cut to the protocol\'s bound by the worker, so the run still ends', async () => {
    const jobs = jobsDir({ 'long.mjs': `export default { name: 'long', run: () => ({ message: 'x'.repeat(${MAX_TEXT_LENGTH * 2}) }) };\n` });
    const pool = createNodePool({ min: 1, max: 1 });
    try {
      const result = await pool.run({ ...io(), runId: 'long-1', module: join(jobs, 'long.mjs'), context: {} }).done;
      expect(result.status).toBe('succeeded');
      expect(result.message).toHaveLength(MAX_TEXT_LENGTH);
    } finally {
      await pool.close();
      rmSync(jobs, { recursive: true, force: true });
    }
  });
});

describe('a run the protocol would refuse', () => {
  it('fails at once instead of waiting forever', async () => {
    const pool = createNodePool({ min: 0, max: 1 });
    try {
      const result = await pool.run({ ...io(), runId: 'x'.repeat(MAX_ID_LENGTH + 1), module: fixture('logs-lines.ts'), context: {} }).done;
      expect(result).toMatchObject({ status: 'failed' });
      expect(result.message).toMatch(/^cannot be handed to a worker \(run: \/runId /);
      expect(pool.size).toBe(0);
    } finally {
      await pool.close();
    }
  });
});

describe('hot reload', () => {
  it('runs the edited code after reload(); a run already running finishes on its old code, a run waiting behind it gets the new', async () => {
    const jobs = jobsDir({
      'slow.mjs': `import { appendFileSync } from 'node:fs';\nexport default { name: 'slow', async run(ctx) { appendFileSync(ctx.jobParam, 'v1 started\\n'); await new Promise((r) => setTimeout(r, Number(ctx.shardParam))); return { message: 'v1' }; } };\n`,
    });
    const module = join(jobs, 'slow.mjs');
    const pool = createNodePool({ min: 1, max: 1, pipelineYoungMs: 60_000 });
    try {
      pool.preload(module);
      expect((await pool.run({ ...io(), runId: 'hr-1', module, context: { jobParam: join(dir, 'hr-1.txt'), shardParam: '0' } }).done).message).toBe('v1');
      const seen = join(dir, 'hr-long.txt');
      const long = pool.run({ ...io(), runId: 'hr-long', module, context: { jobParam: seen, shardParam: '1500' } });
      await eventually(() => expect(lines(seen)).toEqual(['v1 started']), { timeoutMs: 15_000 });
      // Waits inside the busy worker (it is young by this pool's rule), which has the old code.
      const behind = pool.run({ ...io(), runId: 'hr-behind', module, context: { jobParam: join(dir, 'hr-behind.txt'), shardParam: '0' } });
      writeFileSync(module, versioned('slow', 'v2'));
      pool.reload([module]);
      expect((await long.done)).toMatchObject({ status: 'succeeded', message: 'v1' });
      expect((await behind.done)).toMatchObject({ status: 'succeeded', message: 'v2' });
      expect((await pool.run({ ...io(), runId: 'hr-next', module, context: {} }).done).message).toBe('v2');
      expect(pool.size).toBe(1);
    } finally {
      await pool.close();
      rmSync(jobs, { recursive: true, force: true });
    }
  });

  it('follows the folder: an edited job, an edited helper, a job added and one removed', async () => {
    const jobs = jobsDir({
      'greet.mjs': `import { word } from './lib/word.mjs';\nexport default { name: 'greet', run: () => ({ message: 'hello ' + word }) };\n`,
    });
    mkdirSync(join(jobs, 'lib'));
    writeFileSync(join(jobs, 'lib', 'word.mjs'), `export const word = 'one';\n`);
    const { logger } = capture();
    const pool = createNodePool({ min: 1, max: 2 });
    const modules = await loadJobModules(jobs);
    const announced: string[][] = [];
    let reloads = 0;
    const watch = createJobFolderWatch({ dir: jobs, modules, pool, logger, onHandlers: (h) => announced.push(h), onReloaded: () => { reloads += 1; } });
    const greet = async (runId: string): Promise<string> => (await pool.run({ ...io(), runId, module: modules.get('greet')!, context: {} }).done).message;
    try {
      expect(await greet('f-1')).toBe('hello one');
      // The job itself changes.
      let seen = reloads;
      writeFileSync(join(jobs, 'greet.mjs'), `import { word } from './lib/word.mjs';\nexport default { name: 'greet', run: () => ({ message: 'hi ' + word }) };\n`);
      await eventually(() => expect(reloads).toBeGreaterThan(seen), { timeoutMs: 15_000 });
      expect(await greet('f-2')).toBe('hi one');
      // A helper it imports changes (in a subfolder).
      seen = reloads;
      writeFileSync(join(jobs, 'lib', 'word.mjs'), `export const word = 'two';\n`);
      await eventually(() => expect(reloads).toBeGreaterThan(seen), { timeoutMs: 15_000 });
      expect(await greet('f-3')).toBe('hi two');
      // A job is added: announced, and it runs.
      writeFileSync(join(jobs, 'added.mjs'), versioned('added', 'added ran'));
      await eventually(() => expect(announced.at(-1)).toEqual(['added', 'greet']), { timeoutMs: 15_000 });
      expect((await pool.run({ ...io(), runId: 'f-4', module: modules.get('added')!, context: {} }).done).message).toBe('added ran');
      // ...and removed.
      rmSync(join(jobs, 'added.mjs'));
      await eventually(() => expect(announced.at(-1)).toEqual(['greet']), { timeoutMs: 15_000 });
      expect(modules.has('added')).toBe(false);
    } finally {
      watch.close();
      await pool.close();
      rmSync(jobs, { recursive: true, force: true });
    }
  });
});

describe('a jobs folder with helpers and a broken file', () => {
  it('loads and runs the job, which imports a helper beside it; the helper is no job; the broken file is reported', async () => {
    const jobs = jobsDir({
      'report.mjs': `import { total } from './sums.mjs';\nexport default { name: 'report', run: () => ({ message: 'total ' + total([1, 2, 3]) }) };\n`,
      'sums.mjs': 'export const total = (xs) => xs.reduce((a, b) => a + b, 0);\n',
      'broken.ts': 'export default {',
    });
    const { logger, lines: logged } = capture();
    const pool = createNodePool({ min: 0, max: 1 });
    try {
      const modules = await loadJobModules(jobs, undefined, undefined, logger);
      expect([...modules.keys()]).toEqual(['report']);
      const result = await pool.run({ ...io(), runId: 'folder-1', module: modules.get('report')!, context: {} }).done;
      expect(result).toMatchObject({ status: 'succeeded', message: 'total 6' });
      expect(logged.filter((l) => l.msg === 'a module of the jobs folder is a helper, not a job').map((l) => l.file)).toEqual(['sums.mjs']);
      const problems = logged.filter((l) => l.msg === 'a file of the jobs folder is not a job');
      expect(problems.map((l) => l.file)).toEqual(['broken.ts']);
      expect(String(problems[0]!.reason)).toMatch(/^cannot be imported: /);
    } finally {
      await pool.close();
      rmSync(jobs, { recursive: true, force: true });
    }
  });
});
