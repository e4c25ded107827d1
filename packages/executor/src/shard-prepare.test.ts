// Shard nodes are read (and made, idle) when a job's items are applied here, ahead of the first fire:
// createExecutor embedded in this process on the real ZooKeeper of the test run (the allocator's part
// is played by writing the assignment, summary and applied nodes).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { commandName, createMetrics, createZkClient, encodeJson, parseJobConfig, paths, readMetric, readShard, waitForEvent, type Metrics, type ZkClient } from '@orrery/core';
import { eventually, uniqueRoot } from '@orrery/core/testing';
import { createExecutor, type Executor } from './index.js';

const zkConnect = inject('zkConnect');
const root = uniqueRoot('shard-prepare');
const NS = 'prep';
const EXECUTOR = 'e1';

let admin: ZkClient;
let executor: Executor;
const registry: Metrics = createMetrics({ processMetrics: false });

beforeAll(async () => {
  admin = createZkClient({ connect: zkConnect, root });
  await admin.start();
  await admin.mkdirp(paths.jobs(NS));
  await admin.set(paths.namespace(NS), encodeJson({ description: '', alarm: { silenceSeconds: 300 }, createdAt: 0 }));
  await admin.mkdirp(paths.executor(NS, EXECUTOR));
  await admin.create(paths.executorAssignment(NS, EXECUTOR), encodeJson({ allocatorEpoch: 1, jobs: {} }));
  executor = createExecutor({
    connect: zkConnect, root, namespace: NS, name: EXECUTOR, sessionTimeoutMs: 6000,
    dataDir: mkdtempSync(join(tmpdir(), 'prep-')), fenceGuard: false,
    logger: pino({ level: 'silent' }), metrics: registry,
  });
  await executor.start();
}, 60_000);

afterAll(async () => {
  await executor?.close();
  await admin?.close();
});

/** Writes `config` as a job whose `items` are placed here, as the allocator and its leader would: assignment and applied. */
async function placedJob(config: Record<string, unknown>, items: number[]): Promise<void> {
  const job = String(config.name);
  await admin.create(paths.job(NS, job), encodeJson(parseJobConfig(config)));
  const placed = { [EXECUTOR]: items };
  await admin.create(paths.jobAssignment(NS, job), encodeJson({ epoch: 1, allocatorEpoch: 1, items: placed, unassigned: [] }));
  await admin.create(paths.jobApplied(NS, job), encodeJson({ epoch: 1, allocatorEpoch: 1, items: placed }));
}

it('an enabled job given to an executor has its shard nodes made idle before its first fire, and its first claim takes them from there', async () => {
  const job = 'yearly';
  // Fires once a year: nothing but the executor's preparation touches the shard nodes.
  await placedJob({ name: job, type: 'shell', command: 'exit 0', cron: '0 0 1 1 *', enabled: true, shardingTotalCount: 3 }, [0, 1, 2]);
  await admin.mkdirp(paths.jobCommands(NS, job));
  const owned = waitForEvent(executor, 'items:changed', { predicate: (e) => e.job === job && e.items.length === 3, timeoutMs: 30_000 });
  await admin.set(paths.executorAssignment(NS, EXECUTOR), encodeJson({ allocatorEpoch: 1, jobs: { [job]: { epoch: 1, items: [0, 1, 2] } } }));
  await owned;

  for (const item of [0, 1, 2]) {
    await eventually(async () => {
      const shard = await readShard(admin, paths.jobShard(NS, job, item));
      expect(shard).toMatchObject({ state: { state: 'idle' }, version: 0 });
      expect(shard!.state).not.toHaveProperty('last');
    }, { timeoutMs: 10_000 });
  }

  // A run now claims each prepared node (one compare-and-set from version 0) and records its outcome.
  const finished = new Set<number>();
  const off = executor.on('run:finished', (e) => { if (e.job === job && e.status === 'succeeded' && e.recorded) finished.add(e.item); });
  try {
    await admin.create(paths.jobCommand(NS, job, commandName.sequential()), encodeJson({ kind: 'run', requestedAt: Date.now() }), 'persistent-sequential');
    await eventually(() => expect([...finished].sort()).toEqual([0, 1, 2]), { timeoutMs: 30_000 });
  } finally {
    off();
  }
  for (const item of [0, 1, 2]) {
    const shard = await readShard(admin, paths.jobShard(NS, job, item));
    // Created idle (0), claimed (1), completed (2): no other write.
    expect(shard).toMatchObject({ state: { state: 'idle', last: { status: 'succeeded' } }, version: 2 });
  }
}, 90_000);

it('a disabled job gets no shard nodes until it is enabled', async () => {
  const job = 'off';
  const config = { name: job, type: 'shell', command: 'exit 0', cron: '0 0 1 1 *', shardingTotalCount: 2 };
  await placedJob({ ...config, enabled: false }, [0, 1]);
  await admin.mkdirp(paths.jobCommands(NS, job));
  const owned = waitForEvent(executor, 'items:changed', { predicate: (e) => e.job === job && e.items.length === 2, timeoutMs: 30_000 });
  await admin.set(paths.executorAssignment(NS, EXECUTOR), encodeJson({ allocatorEpoch: 1, jobs: { yearly: { epoch: 1, items: [0, 1, 2] }, [job]: { epoch: 1, items: [0, 1] } } }));
  await owned;
  expect(await admin.exists(paths.jobShard(NS, job, 0))).toBeNull();
  expect(await admin.exists(paths.jobShard(NS, job, 1))).toBeNull();

  await admin.set(paths.job(NS, job), encodeJson(parseJobConfig({ ...config, enabled: true })));
  for (const item of [0, 1]) {
    await eventually(async () => expect(await readShard(admin, paths.jobShard(NS, job, item))).toMatchObject({ state: { state: 'idle' }, version: 0 }), { timeoutMs: 10_000 });
  }
}, 90_000);

it('a job whose folders exist (another executor made them): only its latch node and its shard nodes are created', async () => {
  const job = 'joined';
  await placedJob({ name: job, type: 'shell', command: 'exit 0', cron: '0 0 1 1 *', enabled: true, shardingTotalCount: 3 }, [0, 1, 2]);
  for (const folder of [paths.jobCommands(NS, job), paths.jobShards(NS, job), paths.jobLeader(NS, job)]) await admin.create(folder);
  const creates = async (): Promise<number> => readMetric(await registry.metrics(), 'orrery_zookeeper_operation_seconds_count', { operation: 'create' }) ?? 0;
  const before = await creates();
  const owned = waitForEvent(executor, 'items:changed', { predicate: (e) => e.job === job && e.items.length === 3, timeoutMs: 30_000 });
  await admin.set(paths.executorAssignment(NS, EXECUTOR), encodeJson({ allocatorEpoch: 1, jobs: { yearly: { epoch: 1, items: [0, 1, 2] }, off: { epoch: 1, items: [0, 1] }, [job]: { epoch: 1, items: [0, 1, 2] } } }));
  await owned;
  await eventually(async () => {
    expect(await admin.getChildren(paths.jobLeader(NS, job))).toHaveLength(1);
    for (const item of [0, 1, 2]) expect(await readShard(admin, paths.jobShard(NS, job, item))).toMatchObject({ state: { state: 'idle' }, version: 0 });
  }, { timeoutMs: 10_000 });
  // The metric counts a create when its reply reaches the executor, which may be after this client
  // sees the node. ZooKeeper answers a session in order, and a watch's event after the replies sent
  // before it: once the executor lists a node written now, every reply to its creates has arrived.
  const listed = waitForEvent(executor, 'commands:listed', { predicate: (e) => e.job === job && e.names.includes('barrier'), timeoutMs: 10_000 });
  await admin.create(paths.jobCommand(NS, job, 'barrier'));
  await listed;
  // The latch node and three shard nodes: no create of a folder (each would be refused).
  expect(await creates() - before).toBe(4);
}, 90_000);
