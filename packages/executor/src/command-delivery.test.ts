// Commands reach the executor whatever the link does and whatever the node holds: createExecutor
// embedded in this process, talking to the real ZooKeeper of the test run through a fault-injecting
// TCP proxy (the allocator's part is played by writing the assignment, summary and applied nodes).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { commandName, createMetrics, createZkClient, encodeJson, parseJobConfig, paths, readMetric, waitForEvent, type Metrics, type ZkClient } from '@orrery/core';
import { createTcpProxy, eventually, uniqueRoot, type TcpProxy } from '@orrery/core/testing';
import { createExecutor, type Executor } from './index.js';

const zkConnect = inject('zkConnect');
const root = uniqueRoot('command-delivery');
const NS = 'cmds';
const EXECUTOR = 'behind-proxy';

let admin: ZkClient;
let proxy: TcpProxy;
let executor: Executor;
let registry: Metrics;
const lines: Array<Record<string, unknown>> = [];

/** Creates a shell job owned (items 0 and 1) by the executor, as the allocator and job leader would. */
async function ownedJob(job: string, epoch: number): Promise<void> {
  await admin.create(paths.job(NS, job), encodeJson(parseJobConfig({ name: job, type: 'shell', command: 'echo "item $ORRERY_SHARD_ITEM"', enabled: true, shardingTotalCount: 2 })));
  const items = { [EXECUTOR]: [0, 1] };
  await admin.create(paths.jobAssignment(NS, job), encodeJson({ epoch: 1, allocatorEpoch: 1, items, unassigned: [] }));
  await admin.create(paths.jobApplied(NS, job), encodeJson({ epoch: 1, allocatorEpoch: 1, items }));
  await admin.mkdirp(paths.jobCommands(NS, job));
  const owned = waitForEvent(executor, 'items:changed', { predicate: (e) => e.job === job && e.items.length === 2, timeoutMs: 30_000 });
  const jobs = Object.fromEntries(executor.jobs().map((j) => [j, { epoch: 1, items: [0, 1] }]));
  await admin.set(paths.executorAssignment(NS, EXECUTOR), encodeJson({ allocatorEpoch: 1, jobs: { ...jobs, [job]: { epoch, items: [0, 1] } } }));
  await owned;
}

/** A run-now command as the CLI writes it. */
const runNow = (job: string) => admin.create(paths.jobCommand(NS, job, commandName.sequential()), encodeJson({ kind: 'run', requestedAt: Date.now() }), 'persistent-sequential');

beforeAll(async () => {
  admin = createZkClient({ connect: zkConnect, root });
  await admin.start();
  await admin.mkdirp(paths.jobs(NS));
  await admin.set(paths.namespace(NS), encodeJson({ description: '', alarm: { silenceSeconds: 300 }, createdAt: 0 }));
  await admin.mkdirp(paths.executor(NS, EXECUTOR));
  await admin.create(paths.executorAssignment(NS, EXECUTOR), encodeJson({ allocatorEpoch: 1, jobs: {} }));
  proxy = await createTcpProxy({ targetPort: Number(zkConnect.split(':').at(-1)) });
  registry = createMetrics({ processMetrics: false });
  executor = createExecutor({
    connect: proxy.connectString, root, namespace: NS, name: EXECUTOR, sessionTimeoutMs: 6000,
    dataDir: mkdtempSync(join(tmpdir(), 'cmds-')),
    metrics: registry,
    logger: pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>); } }),
  });
  await executor.start();
}, 60_000);

afterAll(async () => {
  await executor?.close();
  await proxy?.close();
  await admin?.close();
});

describe('job commands', () => {
  it('a run-now whose read is cut by a broken link stays unseen, is read again once the link is back, and runs', async () => {
    await ownedJob('cut', 1);
    const listed: string[][] = [];
    let cut = false;
    const offListed = executor.on('commands:listed', (e) => {
      if (e.job !== 'cut') return;
      listed.push(e.names);
      // Listed, not read yet: cut the link now (synchronously, before the read goes out), once.
      if (!cut) {
        cut = true;
        proxy.blackhole();
      }
    });
    const states: string[] = [];
    const offState = executor.zk.on('state', (s) => {
      states.push(s.state);
      // The read failed with the link (the client gave up on the connection): bring the link back.
      // The reset drops the starved connections, so the client reconnects at once.
      if (s.state === 'SUSPENDED') {
        proxy.forward();
        proxy.reset();
      }
    });
    const finished: number[] = [];
    const offFinished = executor.on('run:finished', (e) => { if (e.job === 'cut') finished.push(e.item); });
    try {
      const created = await runNow('cut');
      const name = created.split('/').at(-1)!;
      await eventually(() => expect(finished.sort()).toEqual([0, 1]), { timeoutMs: 60_000, intervalMs: 100 });
      // Listed once before the cut and again after it: the failed read did not mark it seen.
      expect(listed.filter((names) => names.includes(name)).length).toBeGreaterThanOrEqual(2);
      expect(states[0]).toBe('SUSPENDED');
      expect(lines.some((l) => l.msg === 'could not read a command; it is read again once connected' && l.node === paths.jobCommand(NS, 'cut', name))).toBe(true);
      const records = executor.history.list('cut');
      expect(records.map((r) => [r.item, r.trigger, r.status]).sort()).toEqual([[0, 'run-now', 'succeeded'], [1, 'run-now', 'succeeded']]);
      // Read once: a later pass does not run it again.
      await runNow('cut');
      await eventually(() => expect(finished.length).toBe(4), { timeoutMs: 30_000 });
      expect(executor.history.list('cut')).toHaveLength(4);
    } finally {
      offListed();
      offState();
      offFinished();
      proxy.forward();
    }
  }, 120_000);

  it('a garbage command node is logged once with its path and problem, counted and skipped; a valid command after it still runs', async () => {
    await ownedJob('garbage', 2);
    const skipped: Array<{ name: string; reason: string }> = [];
    const offSkipped = executor.on('command:skipped', (e) => { if (e.job === 'garbage') skipped.push({ name: e.name, reason: e.reason }); });
    const finished: number[] = [];
    const offFinished = executor.on('run:finished', (e) => { if (e.job === 'garbage') finished.push(e.item); });
    const seq = (data: string) => admin.create(paths.jobCommand(NS, 'garbage', commandName.sequential()), data, 'persistent-sequential').then((p) => p.split('/').at(-1)!);
    try {
      const notJson = await seq('{"kind": "run", ');
      const invalid = await seq(JSON.stringify({ kind: 'run', items: [-1], requestedAt: Date.now() }));
      const wrongKind = await seq(JSON.stringify({ kind: 'restart', requestedAt: Date.now() }));
      const failoverInCmd = await seq(JSON.stringify({ kind: 'failover', items: [0], fireTime: 1, requestedAt: Date.now() }));
      await admin.create(paths.jobCommand(NS, 'garbage', 'hand-made'), encodeJson({ kind: 'run', requestedAt: Date.now() }));
      const empty = await seq('');
      await runNow('garbage');
      await eventually(() => expect(finished.sort()).toEqual([0, 1]), { timeoutMs: 30_000 });
      // In name order within a pass; the passes follow the watch, so compare by name.
      const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1);
      expect([...skipped].sort(byName)).toEqual([
        { name: notJson, reason: 'json' },
        { name: invalid, reason: 'invalid' },
        { name: wrongKind, reason: 'invalid' },
        { name: failoverInCmd, reason: 'invalid' },
        { name: empty, reason: 'invalid' },
        { name: 'hand-made', reason: 'name' },
      ]);
      const logged = lines.filter((l) => l.msg === 'command skipped: it cannot be parsed' && String(l.node).startsWith(paths.jobCommands(NS, 'garbage')));
      expect(logged.map((l) => [l.node, l.reason])).toEqual(skipped.map((s) => [paths.jobCommand(NS, 'garbage', s.name), s.reason]));
      expect(logged.find((l) => l.name === invalid)?.problem).toMatch(/items\[0\]: .*greater or equal to 0/);
      expect(logged.find((l) => l.name === wrongKind)?.problem).toMatch(/kind/);
      expect(logged.find((l) => l.name === failoverInCmd)?.problem).toMatch(/kind.*sequential/);
      expect(logged.find((l) => l.name === notJson)?.problem).toMatch(/not valid JSON/);
      const text = await registry.metrics();
      expect(readMetric(text, 'orrery_executor_commands_skipped_total', { reason: 'json' })).toBe(1);
      expect(readMetric(text, 'orrery_executor_commands_skipped_total', { reason: 'invalid' })).toBe(4);
      expect(readMetric(text, 'orrery_executor_commands_skipped_total', { reason: 'name' })).toBe(1);
      // Skipped once: another pass (a new command) neither logs nor counts them again.
      await runNow('garbage');
      await eventually(() => expect(finished.length).toBe(4), { timeoutMs: 30_000 });
      expect(skipped).toHaveLength(6);
      expect(readMetric(await registry.metrics(), 'orrery_executor_commands_skipped_total', { reason: 'invalid' })).toBe(4);
    } finally {
      offSkipped();
      offFinished();
    }
  }, 120_000);

  it('a commands folder deleted by hand is made again, and a run-now written in it runs', async () => {
    await ownedJob('refolder', 3);
    const finished: number[] = [];
    const offFinished = executor.on('run:finished', (e) => { if (e.job === 'refolder') finished.push(e.item); });
    try {
      await runNow('refolder');
      await eventually(() => expect(finished.sort()).toEqual([0, 1]), { timeoutMs: 30_000 });
      const folder = paths.jobCommands(NS, 'refolder');
      for (const name of await admin.getChildren(folder)) await admin.delete(`${folder}/${name}`);
      const before = (await admin.exists(folder))!.czxid;
      await admin.delete(folder);
      // The listing's watch fires with the deletion: the executor makes the folder again.
      await eventually(async () => expect((await admin.exists(folder))?.czxid).toBeGreaterThan(before), { timeoutMs: 30_000 });
      await runNow('refolder');
      await eventually(() => expect(finished).toHaveLength(4), { timeoutMs: 30_000 });
    } finally {
      offFinished();
    }
  }, 120_000);
});
