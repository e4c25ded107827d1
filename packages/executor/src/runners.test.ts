import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { isProcessAlive } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { runShell } from './shell-runner.js';
import { createNodePool } from './node-pool.js';
import { MAX_PARENT_BATCH } from './node-protocol.js';

const dir = mkdtempSync(join(tmpdir(), 'orrery-runners-'));
let n = 0;
const io = (timeoutMs = 0) => {
  n += 1;
  return { stdoutPath: join(dir, `${n}.out`), stderrPath: join(dir, `${n}.err`), timeoutMs, killGraceMs: 500 };
};
const fixture = (name: string): string => fileURLToPath(new URL(`../test/fixtures/jobs/${name}`, import.meta.url));

describe('shell runner', () => {
  it('runs /bin/sh -c with the env contract, never splicing parameters into the command', async () => {
    const spec = io();
    const run = runShell({
      ...spec,
      command: 'echo "item=$ORRERY_SHARD_ITEM param=$ORRERY_SHARD_PARAM"; echo oops >&2; printf \'{"message":"hi %s"}\' "$ORRERY_JOB" > "$ORRERY_RESULT_FILE"',
      env: { ORRERY_SHARD_ITEM: '3', ORRERY_SHARD_PARAM: '$(touch /tmp/orrery-pwned); `id`', ORRERY_JOB: 'backup' },
      resultFile: join(dir, 'r1.json'),
    });
    const result = await run.done;
    expect(result).toMatchObject({ status: 'succeeded', exitCode: 0, message: 'hi backup' });
    expect(result.stdoutTail).toBe('item=3 param=$(touch /tmp/orrery-pwned); `id`\n');
    expect(result.stderrTail).toBe('oops\n');
    expect(readFileSync(spec.stdoutPath, 'utf8')).toBe(result.stdoutTail);
    expect(existsSync('/tmp/orrery-pwned')).toBe(false);
  });

  it('reports a failure with its exit code, and keeps only the last 4 KB in the tail', async () => {
    const spec = io();
    const result = await runShell({ ...spec, command: 'for i in $(seq 1 2000); do echo "line $i"; done; exit 3', env: {}, resultFile: join(dir, 'r2.json') }).done;
    expect(result).toMatchObject({ status: 'failed', exitCode: 3, message: 'exit code 3' }); // no stderr: the code alone
    expect(result.stdoutTail.length).toBeLessThanOrEqual(4096);
    expect(result.stdoutTail.endsWith('line 2000\n')).toBe(true);
    expect(readFileSync(spec.stdoutPath, 'utf8')).toContain('line 1\n');
  });

  it('puts the last line of stderr after the exit code of a failed run (a command that does not exist)', async () => {
    const spec = io();
    const result = await runShell({ ...spec, command: 'echo starting >&2; nosuch-orrery-command --flag', env: {}, resultFile: join(dir, 'r-nosuch.json') }).done;
    expect(result.status).toBe('failed');
    expect(result.exitCode).toBe(127);
    // dash says `/bin/sh: 1: nosuch-orrery-command: not found`, bash `/bin/sh: line 1: …: command not found`.
    expect(result.message).toMatch(/^exit code 127: \/bin\/sh: .*nosuch-orrery-command: (command )?not found$/);
    expect(result.stderrTail).toContain('starting\n');
    expect(readFileSync(spec.stderrPath, 'utf8')).toBe(result.stderrTail);
  });

  it('keeps the message of the result file over stderr, and a timeout\'s message as it is', async () => {
    const given = await runShell({ ...io(), command: 'printf \'{"message":"quota exceeded"}\' > "$ORRERY_RESULT_FILE"; echo noise >&2; exit 4', env: {}, resultFile: join(dir, 'r-given.json') }).done;
    expect(given).toMatchObject({ status: 'failed', exitCode: 4, message: 'quota exceeded' });
    const slow = await runShell({ ...io(300), command: 'echo about to sleep >&2; sleep 30', env: {}, resultFile: join(dir, 'r-slow.json') }).done;
    expect(slow).toMatchObject({ status: 'timed-out', message: 'timed out after 0.3 s' });
  });

  it('gives the job none of the executor\'s secrets, the contract variables winning over the environment', async () => {
    const spec = io();
    const result = await runShell({
      ...spec,
      command: 'echo "token=${ORRERY_CLUSTER_TOKEN:-none} auth=${ORRERY_ZK_AUTH:-none} job=$ORRERY_JOB home=${HOME:+set}"',
      env: { ORRERY_JOB: 'contract' },
      baseEnv: { HOME: '/home/x', PATH: process.env.PATH, ORRERY_CLUSTER_TOKEN: 'cluster-secret', ORRERY_ZK_AUTH: 'u:p', ORRERY_JOB: 'from-env' },
      resultFile: join(dir, 'r-env.json'),
    }).done;
    expect(result.stdoutTail).toBe('token=none auth=none job=contract home=set\n');
  });

  it('reports the process group to onSpawn, and a shell that cannot start (a missing cwd) as failed', async () => {
    const groups: number[] = [];
    const run = runShell({ ...io(), command: 'exit 0', env: {}, resultFile: join(dir, 'r-spawn.json'), onSpawn: (pgid) => groups.push(pgid) });
    expect((await run.done).status).toBe('succeeded');
    expect(groups).toEqual([run.pid]);
    const missing = await runShell({ ...io(), command: 'exit 0', env: {}, cwd: join(dir, 'no-such-dir'), resultFile: join(dir, 'r-cwd.json') }).done;
    expect(missing.status).toBe('failed');
    expect(missing.message).toMatch(/^could not start \/bin\/sh: /);
  });

  it('kills the whole process tree on timeout, grandchildren included', async () => {
    const pidFile = join(dir, 'grandchild.pid');
    const result = await runShell({ ...io(800), command: `sh -c 'sleep 60 & echo $! > ${pidFile}; wait'`, env: {}, resultFile: join(dir, 'r3.json') }).done;
    expect(result.status).toBe('timed-out');
    expect(result.message).toBe('timed out after 0.8 s');
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    await eventually(() => expect(isProcessAlive(grandchild)).toBe(false), { timeoutMs: 5000 });
  });

  it('escalates to SIGKILL for a script that ignores SIGTERM, and stop() ends as aborted', async () => {
    const started = join(dir, 'r4.started');
    // The ignored SIGTERM is inherited by `sleep` too: only the SIGKILL ends them, long before 30 s.
    const run = runShell({ ...io(), command: `trap '' TERM; touch ${started}; sleep 30`, env: {}, resultFile: join(dir, 'r4.json') });
    await eventually(() => expect(existsSync(started)).toBe(true));
    run.stop('stop');
    const result = await run.done;
    expect(result).toMatchObject({ status: 'aborted', signal: 'SIGKILL' });
    expect(isProcessAlive(run.pid)).toBe(false);
  });
});

describe('node job pool', () => {
  const pool = createNodePool({ min: 1, max: 2 });
  afterAll(() => pool.close());

  it('runs a defineJob module in a child process with its context', async () => {
    const spec = io();
    const result = await pool.run({
      ...spec, runId: 'r-1', module: fixture('echo-context.ts'),
      context: { namespace: 'ns', job: 'j', shardItem: 1, shardTotal: 4, shardParam: 'b', jobParam: 'x', fireTime: 123, runId: 'r-1', fencingToken: 99, attempt: 1 },
    }).done;
    expect(result).toMatchObject({ status: 'succeeded', message: 'done ns/j#1 fire=123 token=99 owner=true' });
    expect(result.stdoutTail).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info item 1 of 4 param b job x\n$/); // ctx.log lines carry their time
  });

  it('reports a thrown error as failed, with the stack in stderr (plain .js modules work too)', async () => {
    const result = await pool.run({ ...io(), runId: 'r-2', module: fixture('fails.js'), context: {} }).done;
    expect(result).toMatchObject({ status: 'failed', message: 'boom from fails.js' });
    expect(result.stderrTail).toContain('Error: boom from fails.js');
  });

  it.each([['a stop', 'aborted'], ['its timeout', 'timed-out']] as const)('gives a job its kill grace to clean up after %s (the worker outlives the SIGTERM until the run ends)', async (what, status) => {
    const spec = io(what === 'a stop' ? 0 : 800);
    const run = pool.run({ ...spec, runId: `cleanup-${status}`, module: fixture('cleans-up.ts'), context: {} });
    await eventually(() => expect(existsSync(spec.stdoutPath) && readFileSync(spec.stdoutPath, 'utf8')).toContain('working'));
    if (what === 'a stop') run.stop('stop');
    const result = await run.done;
    expect(result.status).toBe(status);
    expect(readFileSync(spec.stdoutPath, 'utf8')).toMatch(/info working\n.*info cleaned up\n$/);
  });

  it('kills a job that ignores ctx.signal at its timeout, and the pool stays healthy', async () => {
    const run = pool.run({ ...io(1000), runId: 'r-3', module: fixture('ignores-signal.ts'), context: {} });
    await eventually(() => expect(run.pid).toBeGreaterThan(0));
    const pid = run.pid;
    const result = await run.done;
    expect(result.status).toBe('timed-out');
    await eventually(() => expect(isProcessAlive(pid)).toBe(false));
    const next = await pool.run({ ...io(), runId: 'r-4', module: fixture('echo-context.ts'), context: { shardItem: 0 } }).done;
    expect(next.status).toBe('succeeded');
  });

  it('stops a cooperative job through ctx.signal (aborted), and queues runs beyond max', async () => {
    const a = pool.run({ ...io(), runId: 'r-5', module: fixture('sleeps.ts'), context: { jobParam: '5000' } });
    const b = pool.run({ ...io(), runId: 'r-6', module: fixture('sleeps.ts'), context: { jobParam: '300' } });
    const c = pool.run({ ...io(), runId: 'r-7', module: fixture('sleeps.ts'), context: { jobParam: '100' } });
    expect(pool.size).toBeLessThanOrEqual(2);
    setTimeout(() => a.stop('stop'), 200);
    expect((await a.done).status).toBe('aborted');
    expect((await b.done).status).toBe('succeeded');
    expect((await c.done).status).toBe('succeeded');
  });
});

describe('node job pool dispatch', () => {
  const ledgerLines = (path: string): string[] => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);
  const spec = (runId: string, path: string, ms: number, timeoutMs = 0) => ({ ...io(timeoutMs), runId, module: fixture('append.ts'), context: { runId, jobParam: `${path},${ms}` } });

  it('runs a burst of short runs back to back, and moves runs waiting behind a long one to a free worker', async () => {
    const pool = createNodePool({ min: 2, max: 2 });
    try {
      const path = join(dir, 'burst.txt');
      const long = pool.run(spec('long', path, 3000));
      const shorts = Array.from({ length: 20 }, (_, i) => pool.run(spec(`short-${i}`, path, 5)));
      const results = await Promise.all(shorts.map((r) => r.done));
      expect(results.every((r) => r.status === 'succeeded')).toBe(true);
      // None waited for the 3-second run: every short one ended before it did (an order, not a
      // time limit, so a loaded machine starting its second worker slowly still passes).
      const longResult = await long.done;
      expect(longResult.status).toBe('succeeded');
      for (const r of results) expect(r.endedAt).toBeLessThan(longResult.endedAt);
      // Every run started exactly once.
      const lines = ledgerLines(path);
      expect(lines.sort()).toEqual(['long', ...Array.from({ length: 20 }, (_, i) => `short-${i}`)].sort());
    } finally {
      await pool.close();
    }
  });

  it('stops a run that waits in a worker without ever starting it', async () => {
    const pool = createNodePool({ min: 1, max: 1, pipelineYoungMs: 10_000 });
    try {
      const path = join(dir, 'queued-stop.txt');
      const first = pool.run(spec('first', path, 600));
      const second = pool.run(spec('second', path, 0));
      second.stop('stop');
      expect(await second.done).toMatchObject({ status: 'aborted', message: 'stopped before it started (stop)' });
      expect((await first.done).status).toBe('succeeded');
      expect(ledgerLines(path)).toEqual(['first']);
    } finally {
      await pool.close();
    }
  });

  it('starts a run handed over ahead of time on its startAt, never before, earliest first', async () => {
    const pool = createNodePool({ min: 1, max: 1 });
    try {
      const path = join(dir, 'start-at.txt');
      // A ready worker first: what is timed below is the hand-over, not a worker's boot.
      expect((await pool.run(spec('warm-up', join(dir, 'start-at-warm-up.txt'), 0)).done).status).toBe('succeeded');
      const t0 = Date.now();
      const starts = new Map<string, number>();
      const late = pool.run({ ...spec('late', path, 0), startAt: t0 + 900, onStart: (at) => starts.set('late', at) });
      const early = pool.run({ ...spec('early', path, 0), startAt: t0 + 600, onStart: (at) => starts.set('early', at) });
      const now = pool.run(spec('now', path, 0));
      let nowEndSeen = Infinity;
      void now.done.then(() => { nowEndSeen = Date.now(); });
      const [l, e, n] = await Promise.all([late.done, early.done, now.done]);
      expect([l.status, e.status, n.status]).toEqual(['succeeded', 'succeeded', 'succeeded']);
      // In startAt order (a run without one is due at once), each on its startAt and not before.
      expect(ledgerLines(path)).toEqual(['now', 'early', 'late']);
      expect(e.startedAt).toBeGreaterThanOrEqual(t0 + 600);
      expect(l.startedAt).toBeGreaterThanOrEqual(t0 + 900);
      expect(starts.get('early')).toBe(e.startedAt);
      expect(starts.get('late')).toBe(l.startedAt);
      // A run's end is told when the next run is not due yet, not held back to go with its start.
      expect(nowEndSeen).toBeLessThan(e.startedAt);
      // (Punctuality itself is measured by `npm run bench executor`.)
    } finally {
      await pool.close();
    }
  });

  it('reports no end while a run that is due is still to start: a burst\'s starts come first', async () => {
    // (A long bound on the hold: what is checked is the order, on a machine of any speed.)
    const pool = createNodePool({ min: 1, max: 1, startsFirstMaxMs: 60_000 });
    try {
      const path = join(dir, 'starts-first.txt');
      expect((await pool.run(spec('warm-up', join(dir, 'starts-first-warm-up.txt'), 0)).done).status).toBe('succeeded');
      const events: string[] = [];
      const startAt = Date.now() + 300;
      // One worker, 5 ms a run: each run's end reaches the pool before the next run's start.
      const burst = Array.from({ length: 12 }, (_, i) => pool.run({ ...spec(`b-${i}`, path, 5), startAt, onStart: () => events.push(`start b-${i}`) }));
      for (const [i, r] of burst.entries()) void r.done.then(() => events.push(`end b-${i}`));
      const results = await Promise.all(burst.map((r) => r.done));
      expect(results.map((r) => r.status)).toEqual(burst.map(() => 'succeeded'));
      expect(ledgerLines(path)).toEqual(burst.map((_, i) => `b-${i}`));
      // Every start of the burst was announced before any of its runs was reported ended.
      expect(events.slice(0, 12)).toEqual(burst.map((_, i) => `start b-${i}`));
      expect(events.slice(12).sort()).toEqual(burst.map((_, i) => `end b-${i}`).sort());
    } finally {
      await pool.close();
    }
  });

  it(`hands a burst given in one turn to its worker in batches (more than ${MAX_PARENT_BATCH} runs: several), and runs each once, in order`, async () => {
    const pool = createNodePool({ min: 1, max: 1, pipelineYoungMs: 60_000 });
    try {
      const path = join(dir, 'batches.txt');
      const names = Array.from({ length: MAX_PARENT_BATCH * 2 + 3 }, (_, i) => `burst-${i}`);
      const runs = names.map((name) => pool.run(spec(name, path, 0)));
      const results = await Promise.all(runs.map((r) => r.done));
      expect(results.map((r) => r.status)).toEqual(names.map(() => 'succeeded'));
      expect(ledgerLines(path)).toEqual(names);
    } finally {
      await pool.close();
    }
  });

  it('withdraws a run that has not started (it never runs), but not one that has', async () => {
    const pool = createNodePool({ min: 1, max: 1 });
    try {
      const path = join(dir, 'withdraw.txt');
      // A warm worker first: a loaded machine can take longer than the waiting run's 800 ms to start
      // one, and the worker would then find the waiting run due before the other arrived. The
      // running one lasts long enough that both withdrawals reach the worker while it runs.
      await pool.run(spec('warm-up', join(dir, 'withdraw-warm-up.txt'), 0)).done;
      const waiting = pool.run({ ...spec('waiting', path, 0), startAt: Date.now() + 800 });
      const running = pool.run(spec('running', path, 1500));
      await eventually(() => expect(ledgerLines(path)).toEqual(['running']));
      waiting.withdraw!();
      running.withdraw!();
      expect(await waiting.done).toMatchObject({ status: 'aborted', withdrawn: true });
      const ran = await running.done;
      expect(ran.status).toBe('succeeded');
      expect(ran.withdrawn).toBeUndefined();
      // Past the withdrawn run's startAt: it never started.
      await eventually(() => expect(Date.now()).toBeGreaterThan(ran.endedAt + 600), { timeoutMs: 2000 });
      expect(ledgerLines(path)).toEqual(['running']);
    } finally {
      await pool.close();
    }
  });

  it('warms workers ahead of need, each importing the preloaded modules before any run', async () => {
    const ledger = join(dir, 'imports.txt');
    process.env.ORRERY_TEST_IMPORT_LEDGER = ledger;
    const pool = createNodePool({ min: 1, max: 3 });
    try {
      pool.preload(fixture('announces-import.ts'));
      pool.warm(3);
      expect(pool.size).toBeGreaterThanOrEqual(1);
      await eventually(() => expect(ledgerLines(ledger)).toHaveLength(3), { timeoutMs: 15_000 });
      expect(new Set(ledgerLines(ledger)).size).toBe(3);
      expect(pool.size).toBe(3);
      // A run then costs no import.
      const result = await pool.run({ ...io(), runId: 'after-warm', module: fixture('announces-import.ts'), context: {} }).done;
      expect(result).toMatchObject({ status: 'succeeded', message: 'ran' });
      expect(ledgerLines(ledger)).toHaveLength(3);
    } finally {
      delete process.env.ORRERY_TEST_IMPORT_LEDGER;
      await pool.close();
    }
  });

  it('gives the runs waiting behind a killed run to a fresh worker', async () => {
    const pool = createNodePool({ min: 1, max: 1 });
    try {
      const path = join(dir, 'after-kill.txt');
      const stuck = pool.run({ ...io(500), runId: 'stuck', module: fixture('ignores-signal.ts'), context: {} });
      const next = pool.run(spec('next', path, 0));
      expect((await stuck.done).status).toBe('timed-out');
      expect((await next.done).status).toBe('succeeded');
      expect(ledgerLines(path)).toEqual(['next']);
    } finally {
      await pool.close();
    }
  });
});
