// The job runtime's promises end to end: createExecutor embedded in this process against the real
// ZooKeeper of the test run, behind a fault-injecting TCP proxy (the allocator's part is played by
// writing the assignment, summary and applied nodes). Claims go out 1.5 s ahead of each fire, so a
// test can act between an early claim and its fire time.
import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { OrreryError, commandName, createMetrics, createZkClient, encodeJson, parseJobConfig, paths, readMetric, readShard, waitForEvent, type JobConfigInput, type Metrics, type ZkClient } from '@orrery/core';
import { createTcpProxy, eventually, forceExpireSession, fourLetterWord, uniqueRoot, type TcpProxy } from '@orrery/core/testing';
import { createExecutor, type Executor } from './index.js';
import type { ExecutorEvents } from './executor-events.js';

const zkConnect = inject('zkConnect');
const root = uniqueRoot('job-runtime');
const NS = 'rt';
const EXECUTOR = 'rt-executor';
const CLAIM_AHEAD_MS = 1500;

let admin: ZkClient;
let proxy: TcpProxy;
let executor: Executor;
let registry: Metrics;
let dir: string;
const lines: Array<Record<string, unknown>> = [];
const owned: Record<string, { epoch: number; items: number[] }> = {};

/** A job's config as a test writes it: a shell job unless it says otherwise. */
type Config = Omit<JobConfigInput, 'type'> & { name: string; type?: 'shell' | 'node' };

/** Creates (or rewrites) a job owned wholly (item 0) by the executor, as the allocator and job leader would. */
async function ownedJob(config: Config): Promise<void> {
  const job = config.name;
  await admin.create(paths.job(NS, job), encodeJson(parseJobConfig({ enabled: true, ...config, type: config.type ?? 'shell' })));
  const items = { [EXECUTOR]: [0] };
  await admin.create(paths.jobAssignment(NS, job), encodeJson({ epoch: 1, allocatorEpoch: 1, items, unassigned: [] }));
  await admin.create(paths.jobApplied(NS, job), encodeJson({ epoch: 1, allocatorEpoch: 1, items }));
  await admin.mkdirp(paths.jobCommands(NS, job));
  const ready = waitForEvent(executor, 'items:changed', { predicate: (e) => e.job === job && e.items.length === 1, timeoutMs: 30_000 });
  owned[job] = { epoch: 1, items: [0] };
  await admin.set(paths.executorAssignment(NS, EXECUTOR), encodeJson({ allocatorEpoch: 1, jobs: owned }));
  await ready;
}

/** Rewrites a job's config (enable/disable, say). */
async function setConfig(config: Config): Promise<void> {
  await admin.set(paths.job(NS, config.name), encodeJson(parseJobConfig({ ...config, type: config.type ?? 'shell' })));
}

/** A run-now command as the CLI writes it. */
const runNow = (job: string) => admin.create(paths.jobCommand(NS, job, commandName.sequential()), encodeJson({ kind: 'run', requestedAt: Date.now() }), 'persistent-sequential');

/** Every event of `name` for `job` from now on, until the returned list's `off()`. */
function record<K extends 'run:started' | 'run:finished' | 'fire:skipped'>(name: K, job: string): Array<ExecutorEvents[K]> & { off(): void } {
  const seen = [] as unknown as Array<ExecutorEvents[K]> & { off(): void };
  seen.off = executor.on(name, (e) => { if (e.job === job) seen.push(e); });
  return seen;
}

/** How many fires not run the executor counted for `outcome` so far. */
const counted = async (outcome: string): Promise<number> => readMetric(await registry.metrics(), 'orrery_executor_fires_not_run_total', { outcome }) ?? 0;

const skipped = (job: string, reason: string, fireTime?: number) => (e: ExecutorEvents['fire:skipped']) => e.job === job && e.reason === reason && (fireTime === undefined || e.fireTime === fireTime);

beforeAll(async () => {
  admin = createZkClient({ connect: zkConnect, root });
  await admin.start();
  await admin.mkdirp(paths.jobs(NS));
  await admin.set(paths.namespace(NS), encodeJson({ description: '', alarm: { silenceSeconds: 300 }, createdAt: 0 }));
  await admin.mkdirp(paths.executor(NS, EXECUTOR));
  await admin.create(paths.executorAssignment(NS, EXECUTOR), encodeJson({ allocatorEpoch: 1, jobs: {} }));
  proxy = await createTcpProxy({ targetPort: Number(zkConnect.split(':').at(-1)) });
  registry = createMetrics({ processMetrics: false });
  dir = mkdtempSync(join(tmpdir(), 'job-runtime-'));
  executor = createExecutor({
    connect: proxy.connectString, root, namespace: NS, name: EXECUTOR, sessionTimeoutMs: 6000,
    logger: pino({ level: 'debug' }, { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>); } }),
    dataDir: join(dir, 'data'), metrics: registry, claimAheadMs: CLAIM_AHEAD_MS, killGraceMs: 1000,
    jobsDir: fileURLToPath(new URL('../test/fixtures/owner/', import.meta.url)),
  });
  await executor.start();
}, 60_000);

afterEach((context) => {
  // A failed test shows what its jobs' runtimes logged.
  if (context.task.result?.state === 'fail') console.log(lines.filter((l) => typeof l.job === 'string').slice(-80).map((l) => JSON.stringify(l)).join('\n'));
});

afterAll(async () => {
  await executor?.close({ graceMs: 500 });
  // Every step of the close finished (each is logged; one that outlasts its bound is an error).
  const late = lines.filter((l) => l.msg === 'a step of the close did not finish in time: going on without it');
  if (late.length > 0) console.log(lines.slice(-60).map((l) => JSON.stringify(l)).join('\n'));
  expect(late).toEqual([]);
  await proxy?.close();
  await admin?.close();
});

describe('a disabled job starts nothing more', () => {
  it('drops a fire queued under overlap: queue (reason disabled); nothing of it starts later', async () => {
    const job = 'queued';
    const started = record('run:started', job);
    try {
      await ownedJob({ name: job, cron: '* * * * * *', overlap: 'queue', command: 'sleep 3' });
      // A second fire replaced the first waiting one: a fire waits behind the run now.
      await waitForEvent(executor, 'fire:skipped', { predicate: skipped(job, 'overlap'), timeoutMs: 20_000 });
      const disabledAt = Date.now();
      const before = await counted('disabled');
      const dropped = waitForEvent(executor, 'fire:skipped', { predicate: skipped(job, 'disabled'), timeoutMs: 10_000 });
      await setConfig({ name: job, cron: '* * * * * *', overlap: 'queue', command: 'sleep 3', enabled: false });
      expect((await dropped).fireTime).toBeLessThan(disabledAt + 1000);
      expect(await counted('disabled')).toBeGreaterThan(before);
      // The run in progress ends; then enabled again, the next run is of a fire after the re-enable —
      // nothing dropped ran in between.
      await waitForEvent(executor, 'run:finished', { predicate: (e) => e.job === job, timeoutMs: 10_000 });
      const enabledAt = Date.now();
      const next = waitForEvent(executor, 'run:started', { predicate: (e) => e.job === job && e.fireTime >= enabledAt, timeoutMs: 10_000 });
      await setConfig({ name: job, cron: '* * * * * *', overlap: 'queue', command: 'true', enabled: true });
      await next;
      expect(started.filter((e) => e.fireTime > disabledAt - 1000 && e.fireTime < enabledAt)).toEqual([]);
    } finally {
      started.off();
      await setConfig({ name: job, cron: '* * * * * *', command: 'true', enabled: false });
    }
  }, 60_000);

  it('gives back an early claim whose shell run waits for its fire time (reason disabled)', async () => {
    const job = 'early-shell';
    const started = record('run:started', job);
    try {
      await ownedJob({ name: job, cron: '*/5 * * * * *', command: 'true' });
      const early = await waitForEvent(executor, 'fire:early', { predicate: (e) => e.job === job && e.claimed.includes(0), timeoutMs: 20_000 });
      const before = await counted('disabled');
      const dropped = waitForEvent(executor, 'fire:skipped', { predicate: skipped(job, 'disabled', early.fireTime), timeoutMs: 10_000 });
      await setConfig({ name: job, cron: '*/5 * * * * *', command: 'true', enabled: false });
      await dropped;
      expect(await counted('disabled')).toBeGreaterThan(before);
      expect(started.filter((e) => e.fireTime === early.fireTime)).toEqual([]);
      // The claim was given back: the item is idle, its last outcome not of that fire.
      const shard = await readShard(admin, paths.jobShard(NS, job, 0));
      expect(shard?.state.state).toBe('idle');
      expect(shard?.state.last?.fireTime).not.toBe(early.fireTime);
    } finally {
      started.off();
    }
  }, 60_000);

  it('drops an early fire deferred behind a run still going (reason disabled)', async () => {
    const job = 'early-deferred';
    const started = record('run:started', job);
    try {
      // Each run lasts 4.5 s of a 5 s period: at the next fire's early claim it still runs.
      await ownedJob({ name: job, cron: '*/5 * * * * *', overlap: 'queue', command: 'sleep 4.5' });
      const early = await waitForEvent(executor, 'fire:early', { predicate: (e) => e.job === job && e.deferred.includes(0), timeoutMs: 20_000 });
      const before = await counted('disabled');
      const dropped = waitForEvent(executor, 'fire:skipped', { predicate: skipped(job, 'disabled', early.fireTime), timeoutMs: 10_000 });
      await setConfig({ name: job, cron: '*/5 * * * * *', overlap: 'queue', command: 'sleep 4.5', enabled: false });
      await dropped;
      expect(await counted('disabled')).toBeGreaterThan(before);
      await waitForEvent(executor, 'run:finished', { predicate: (e) => e.job === job, timeoutMs: 10_000 });
      expect(started.filter((e) => e.fireTime === early.fireTime)).toEqual([]);
    } finally {
      started.off();
    }
  }, 60_000);

  it('drops a retry waiting its backoff (reason disabled)', async () => {
    const job = 'retry-disabled';
    const started = record('run:started', job);
    try {
      await ownedJob({ name: job, command: 'exit 1', retry: { count: 2, backoffSeconds: 3 } });
      const failed = waitForEvent(executor, 'run:finished', { predicate: (e) => e.job === job && e.status === 'failed', timeoutMs: 10_000 });
      await runNow(job);
      const first = await failed;
      const before = await counted('disabled');
      const dropped = waitForEvent(executor, 'fire:skipped', { predicate: skipped(job, 'disabled', first.fireTime), timeoutMs: 10_000 });
      await setConfig({ name: job, command: 'exit 1', retry: { count: 2, backoffSeconds: 3 }, enabled: false });
      await dropped;
      expect(await counted('disabled')).toBeGreaterThan(before);
      // The retry's timer is gone with the skip: only attempt 1 ever started.
      expect(started.map((e) => e.attempt)).toEqual([1]);
    } finally {
      started.off();
    }
  }, 60_000);
});

describe('a manual run is never dropped silently', () => {
  it('a run-now during a cron run waits for it and then runs; a second one waiting replaces the first (reported)', async () => {
    const job = 'manual';
    const started = record('run:started', job);
    const finished = record('run:finished', job);
    const skips = record('fire:skipped', job);
    try {
      await ownedJob({ name: job, cron: '0 0 0 1 1 ?', overlap: 'skip', command: 'sleep 2' });
      const first = waitForEvent(executor, 'run:started', { predicate: (e) => e.job === job, timeoutMs: 10_000 });
      await runNow(job);
      const running = await first;
      // Two more while it runs: the later waits, the earlier is reported replaced (overlap).
      const overlapBefore = await counted('overlap-skipped');
      const replaced = waitForEvent(executor, 'fire:skipped', { predicate: skipped(job, 'overlap'), timeoutMs: 10_000 });
      await runNow(job);
      await runNow(job);
      await replaced;
      expect(await counted('overlap-skipped')).toBe(overlapBefore + 1);
      expect(lines.some((l) => l.job === job && l.msg === 'a waiting requested run was replaced by a newer one')).toBe(true);
      await eventually(() => expect(started).toHaveLength(2), { timeoutMs: 15_000 });
      // The second started only after the first finished.
      expect(finished[0]?.runId).toBe(running.runId);
      expect(started[1]!.trigger).toBe('run-now');
      expect(skips.map((s) => s.reason)).toEqual(['overlap']);
      await eventually(() => expect(finished).toHaveLength(2), { timeoutMs: 15_000 });
      expect(finished.map((f) => f.status)).toEqual(['succeeded', 'succeeded']);
    } finally {
      started.off();
      finished.off();
      skips.off();
    }
  }, 60_000);
});

describe('ctx.isOwner()', () => {
  // A Node run's runtime watches its claim once the run has gone OWNERSHIP_WATCH_AFTER_MS (one
  // `exists` with a watch); a takeover before that is found by that `exists`, one after by its watch.
  it.each([
    { when: 'at once (as a rule before its watch is set)', watched: false },
    { when: 'once its watch is set', watched: true },
  ])('turns false for a Node run whose claim someone else takes over $when', async ({ watched }) => {
    const job = `owner-takeover-${watched ? 'watched' : 'early'}`;
    const ledger = join(dir, `${job}.txt`);
    appendFileSync(ledger, '');
    await ownedJob({ name: job, type: 'node', handler: 'watches-owner', jobParameter: ledger });
    const started = waitForEvent(executor, 'run:started', { predicate: (e) => e.job === job, timeoutMs: 15_000 });
    await runNow(job);
    const { runId } = await started;
    await eventually(() => expect(readFileSync(ledger, 'utf8')).toContain(`start ${runId}`), { timeoutMs: 15_000 });
    const path = paths.jobShard(NS, job, 0);
    // The server's watched paths (`wchp`), each on a line of its own.
    const watchers = async (): Promise<string> => fourLetterWord(Number(zkConnect.split(':').at(-1)), 'wchp');
    if (watched) await eventually(async () => expect(await watchers()).toContain(`${path}\n`), { timeoutMs: 10_000 });
    const held = (await readShard(admin, path))!;
    const takeover = { state: 'running', executor: 'intruder', session: 'deadbeef', runId: 'takeover', fireTime: Date.now(), startedAt: Date.now(), attempt: 1 };
    await admin.set(path, encodeJson(takeover), held.version);
    await eventually(() => expect(readFileSync(ledger, 'utf8')).toContain(`not-owner ${runId}`), { timeoutMs: 10_000 });
    const finished = waitForEvent(executor, 'run:finished', { predicate: (e) => e.job === job, timeoutMs: 15_000 });
    await admin.create(paths.jobCommand(NS, job, commandName.sequential()), encodeJson({ kind: 'stop', requestedAt: Date.now() }), 'persistent-sequential');
    expect(await finished).toMatchObject({ recorded: false });
  }, 60_000);

  it('turns false for a Node run whose executor is cut off from ZooKeeper (the self-fence)', async () => {
    const job = 'owner-fenced';
    const ledger = join(dir, `${job}.txt`);
    appendFileSync(ledger, '');
    await ownedJob({ name: job, type: 'node', handler: 'watches-owner', jobParameter: ledger });
    const started = waitForEvent(executor, 'run:started', { predicate: (e) => e.job === job, timeoutMs: 15_000 });
    await runNow(job);
    const { runId } = await started;
    await eventually(() => expect(readFileSync(ledger, 'utf8')).toContain(`start ${runId}`), { timeoutMs: 15_000 });
    const fenced = waitForEvent(executor, 'fenced', { timeoutMs: 30_000 });
    const finished = waitForEvent(executor, 'run:finished', { predicate: (e) => e.job === job, timeoutMs: 60_000 });
    const registered = waitForEvent(executor, 'executor:registered', { timeoutMs: 60_000 });
    proxy.blackhole();
    try {
      await fenced;
    } finally {
      proxy.forward();
      proxy.reset();
    }
    await finished;
    expect(readFileSync(ledger, 'utf8')).toContain(`not-owner ${runId}`);
    // Back with a session (a new one if the old expired) before the next test.
    await registered.catch(() => undefined);
    await eventually(() => expect(executor.zk.phase).toBe('connected'), { timeoutMs: 30_000 });
  }, 120_000);
});

describe('every fire that does not run is counted by reason', () => {
  it('a pause period: its fires are reported (pause-period) and counted, none runs', async () => {
    const job = 'paused';
    // Paused from this minute (UTC) for three minutes: every fire of this every-second job meanwhile.
    const hhmm = (ms: number): string => new Date(ms).toISOString().slice(11, 16);
    const pausePeriodTime = `${hhmm(Date.now())}-${hhmm(Date.now() + 180_000)}`;
    const paused = waitForEvent(executor, 'fire:skipped', { predicate: skipped(job, 'pause-period'), timeoutMs: 15_000 });
    const started = record('run:started', job);
    try {
      await ownedJob({ name: job, cron: '* * * * * *', command: 'true', pausePeriodTime });
      const first = await paused;
      expect(first.item).toBeUndefined();
      expect(await counted('pause-period')).toBeGreaterThanOrEqual(1);
      expect([...started]).toEqual([]);
      expect(lines.filter((l) => l.job === job && l.msg === 'fire skipped' && l.reason === 'pause-period').length).toBeGreaterThanOrEqual(1);
    } finally {
      started.off();
      await setConfig({ name: job, cron: '* * * * * *', command: 'true', enabled: false });
    }
  }, 60_000);


  it('a cron fire that finds a crashed run waiting for its failover re-run: failover-pending, counted; the re-run comes first', async () => {
    const job = 'pending';
    const before = await counted('failover-pending');
    try {
      await ownedJob({ name: job, cron: '* * * * * *', failover: true, command: 'true' });
      await waitForEvent(executor, 'run:finished', { predicate: (e) => e.job === job, timeoutMs: 15_000 });
      // A crashed run of an earlier fire, marked by hand as a job leader would (no command: the
      // next cron claim finds the mark).
      const crashedFire = Math.floor(Date.now() / 1000) * 1000 - 10_000;
      const mark = { state: 'failover', executor: 'ghost', session: 'dead', runId: 'ghost-run', fireTime: crashedFire, startedAt: crashedFire, attempt: 1, markedAt: Date.now() };
      const pending = waitForEvent(executor, 'fire:skipped', { predicate: skipped(job, 'failover-pending'), timeoutMs: 15_000 });
      const rerun = waitForEvent(executor, 'run:started', { predicate: (e) => e.job === job && e.trigger === 'failover', timeoutMs: 15_000 });
      const path = paths.jobShard(NS, job, 0);
      await eventually(async () => {
        const shard = await readShard(admin, path);
        expect(shard?.state.state).toBe('idle');
        await admin.set(path, encodeJson(mark), shard!.version);
      }, { timeoutMs: 10_000, intervalMs: 50 });
      await pending;
      expect((await rerun).fireTime).toBe(crashedFire);
      expect(await counted('failover-pending')).toBeGreaterThan(before);
    } finally {
      await setConfig({ name: job, cron: '* * * * * *', failover: true, command: 'true', enabled: false });
    }
  }, 60_000);

  it('a job deleted while a fire waits behind its run: the waiting fire is dropped (job-deleted) and counted', async () => {
    const job = 'deleted';
    const before = await counted('job-deleted');
    await ownedJob({ name: job, cron: '* * * * * *', overlap: 'queue', command: 'sleep 3' });
    await waitForEvent(executor, 'fire:skipped', { predicate: skipped(job, 'overlap'), timeoutMs: 20_000 });
    const dropped = waitForEvent(executor, 'fire:skipped', { predicate: skipped(job, 'job-deleted'), timeoutMs: 10_000 });
    // As `orrery job delete --force` does; a node created meanwhile (a command, a latch) is deleted on the next try.
    await eventually(() => admin.deleteRecursive(paths.job(NS, job)), { timeoutMs: 10_000, intervalMs: 50 });
    await dropped;
    expect(await counted('job-deleted')).toBeGreaterThan(before);
    // The executor no longer has the job.
    delete owned[job];
    await admin.set(paths.executorAssignment(NS, EXECUTOR), encodeJson({ allocatorEpoch: 1, jobs: owned }));
    await eventually(() => expect(executor.jobs()).not.toContain(job), { timeoutMs: 10_000 });
  }, 60_000);

  it('a fire while the executor is cut off from ZooKeeper: not-connected, counted; firing resumes once the link is back', async () => {
    const job = 'cut-off';
    const before = await counted('not-connected');
    try {
      await ownedJob({ name: job, cron: '* * * * * *', command: 'true' });
      await waitForEvent(executor, 'run:finished', { predicate: (e) => e.job === job, timeoutMs: 15_000 });
      const fenced = waitForEvent(executor, 'fenced', { timeoutMs: 30_000 });
      const notConnected = waitForEvent(executor, 'fire:skipped', { predicate: skipped(job, 'not-connected'), timeoutMs: 30_000 });
      proxy.blackhole();
      try {
        await fenced;
        await notConnected;
      } finally {
        proxy.forward();
        proxy.reset();
      }
      expect(await counted('not-connected')).toBeGreaterThan(before);
      expect(lines.some((l) => l.job === job && (l.msg === 'fire skipped' || l.msg === 'fires skipped') && l.reason === 'not-connected')).toBe(true);
      // Back (in the same session, or a new one): the job fires again.
      const resumedAt = Date.now();
      await waitForEvent(executor, 'run:finished', { predicate: (e) => e.job === job && e.fireTime > resumedAt, timeoutMs: 40_000 });
    } finally {
      await setConfig({ name: job, cron: '* * * * * *', command: 'true', enabled: false }).catch(() => undefined);
    }
  }, 120_000);
});

describe('a job leader without a config yet', () => {
  it('looks for dead claims once the config comes: a crashed run on an item it moved here is re-run', async () => {
    const job = 'late-config';
    // The config node does not parse yet (a new runtime that leads before it has read a valid config
    // is in the same place): the leader applies the assignment, but cannot tell failover from release.
    await admin.create(paths.job(NS, job), '{"name": "late-config", "type": "shell"');
    await admin.create(paths.jobAssignment(NS, job), encodeJson({ epoch: 2, allocatorEpoch: 1, items: { [EXECUTOR]: [0] }, unassigned: [] }));
    await admin.create(paths.jobApplied(NS, job), encodeJson({ epoch: 1, allocatorEpoch: 1, items: { ghost: [0] } }));
    await admin.mkdirp(paths.jobCommands(NS, job));
    await admin.mkdirp(paths.jobShards(NS, job));
    const crashedFire = Math.floor(Date.now() / 1000) * 1000 - 10_000;
    await admin.create(paths.jobShard(NS, job, 0), encodeJson({ state: 'running', executor: 'ghost', session: 'dead', runId: 'ghost-run', fireTime: crashedFire, startedAt: crashedFire, attempt: 1 }));
    owned[job] = { epoch: 2, items: [0] };
    await admin.set(paths.executorAssignment(NS, EXECUTOR), encodeJson({ allocatorEpoch: 1, jobs: owned }));
    try {
      await eventually(async () => expect((await admin.get(paths.jobApplied(NS, job))).data?.toString()).toContain('"epoch":2'), { timeoutMs: 15_000 });
      const rerun = waitForEvent(executor, 'run:started', { predicate: (e) => e.job === job && e.trigger === 'failover', timeoutMs: 15_000 });
      await setConfig({ name: job, cron: '0 0 1 1 *', failover: true, command: 'true', enabled: true });
      expect((await rerun).fireTime).toBe(crashedFire);
    } finally {
      await setConfig({ name: job, cron: '0 0 1 1 *', failover: true, command: 'true', enabled: false });
    }
  }, 60_000);
});

describe('a run whose outcome cannot be written at once', () => {
  it('is recorded once ZooKeeper answers, in a session that lived on: the write and the reads that check it lost to the link do not leave its item running', async () => {
    const job = 'lost-answers';
    const path = paths.jobShard(NS, job, 0);
    const zk = executor.zk as { get: ZkClient['get']; set: ZkClient['set'] };
    const { get, set } = zk;
    // The link drops under the completion's write and the first reads back (as when every server
    // of the ensemble dies at once, and the client still takes itself for connected): each fails
    // with the error the client gives for a lost connection, without reaching the server.
    let lostWrites = 0;
    let lostReads = 0;
    const lost = (operation: string): OrreryError => new OrreryError('connection-loss', `ZooKeeper ${operation} ${path}: connection loss`);
    try {
      await ownedJob({ name: job, cron: '0 0 1 1 *', command: 'sleep 0.5' });
      const started = waitForEvent(executor, 'run:started', { predicate: (e) => e.job === job, timeoutMs: 15_000 });
      const finished = waitForEvent(executor, 'run:finished', { predicate: (e) => e.job === job, timeoutMs: 30_000 });
      await runNow(job);
      const { runId } = await started;
      zk.set = (p, data, version) => (p === path && lostWrites++ < 1 ? Promise.reject(lost('set')) : set(p, data, version));
      zk.get = (p, watcher) => (p === path && lostWrites > 0 && lostReads++ < 3 ? Promise.reject(lost('get')) : get(p, watcher));
      expect(await finished).toMatchObject({ runId, recorded: true });
      expect(lostWrites).toBeGreaterThanOrEqual(1);
      expect(lostReads).toBeGreaterThanOrEqual(4);
      // The node holds the outcome: the item is idle, and its next run claims it.
      expect((await readShard(admin, path))?.state).toMatchObject({ state: 'idle', last: { runId, status: 'succeeded' } });
      zk.set = set;
      zk.get = get;
      const again = waitForEvent(executor, 'run:finished', { predicate: (e) => e.job === job && e.runId !== runId, timeoutMs: 30_000 });
      await runNow(job);
      expect(await again).toMatchObject({ status: 'succeeded', recorded: true });
    } finally {
      zk.set = set;
      zk.get = get;
      await setConfig({ name: job, cron: '0 0 1 1 *', command: 'true', enabled: false }).catch(() => undefined);
    }
  }, 60_000);
});
