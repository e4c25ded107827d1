// createExecutor embedded in this process, against the real ZooKeeper of the test run (the
// allocator's part is played by writing the assignment, summary and applied nodes directly).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { commandName, createZkClient, encodeJson, parseJobConfig, paths, readShard, waitForEvent, type ZkClient } from '@orrery/core';
import { eventually, uniqueRoot } from '@orrery/core/testing';
import { createExecutor, type Executor } from './index.js';

const zkConnect = inject('zkConnect');
const root = uniqueRoot('embedded');
let admin: ZkClient | undefined;
let executor: Executor | undefined;
let ahead: Executor | undefined;
afterAll(async () => {
  await executor?.close();
  await ahead?.close();
  await admin?.close();
});

describe('createExecutor (embedded)', () => {
  it('registers, follows its summary and runs a Node job on run-now', async () => {
    admin = createZkClient({ connect: zkConnect, root });
    await admin.start();
    await admin.mkdirp(paths.jobs('emb'));
    await admin.set(paths.namespace('emb'), encodeJson({ description: '', alarm: { silenceSeconds: 300 }, createdAt: 0 }));
    await admin.create(paths.job('emb', 'ctx'), encodeJson(parseJobConfig({ name: 'ctx', type: 'node', handler: 'echo-context', enabled: true, shardingTotalCount: 2 })));
    executor = createExecutor({
      connect: zkConnect, root, namespace: 'emb', name: 'in-process',
      jobsDir: fileURLToPath(new URL('../test/fixtures/jobs/', import.meta.url)),
      dataDir: mkdtempSync(join(tmpdir(), 'emb-')),
    });
    await executor.start();
    const info = JSON.parse((await admin.get(paths.executorPresence('emb', 'in-process'))).data!.toString()) as { handlers: string[] };
    expect(info.handlers).toEqual(['announces-import', 'append', 'cleans-up', 'echo-context', 'fails', 'ignores-signal', 'sleeps']);
    // What the allocator and the job leader would write.
    const items = { 'in-process': [0, 1] };
    await admin.create(paths.jobAssignment('emb', 'ctx'), encodeJson({ epoch: 1, allocatorEpoch: 1, items, unassigned: [] }));
    await admin.create(paths.jobApplied('emb', 'ctx'), encodeJson({ epoch: 1, allocatorEpoch: 1, items }));
    const changed = waitForEvent(executor, 'items:changed', { predicate: (e) => e.items.length === 2 });
    await admin.create(paths.executorAssignment('emb', 'in-process'), encodeJson({ allocatorEpoch: 1, jobs: { ctx: { epoch: 1, items: [0, 1] } } }));
    await changed;
    expect(executor.jobs()).toEqual(['ctx']);
    const finished: number[] = [];
    const both = new Promise<void>((resolve) => executor!.on('run:finished', (e) => { finished.push(e.item); if (finished.length === 2) resolve(); }));
    await admin.mkdirp(paths.jobCommands('emb', 'ctx'));
    await admin.create(paths.jobCommand('emb', 'ctx', commandName.sequential()), encodeJson({ kind: 'run', requestedAt: Date.now() }), 'persistent-sequential');
    await both;
    expect(finished.sort()).toEqual([0, 1]);
    const records = executor.history.list('ctx');
    expect(records.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect(records[0]!.message).toMatch(/^done emb\/ctx#[01] fire=\d+ token=\d+ owner=true$/);
  });

  it('withdraws a Node run claimed ahead of its fire when the job is disabled before it starts: it never runs, the claim is given back', async () => {
    const fixtures = fileURLToPath(new URL('../test/fixtures/jobs/', import.meta.url));
    admin ??= createZkClient({ connect: zkConnect, root });
    if (admin.phase !== 'connected') await admin.start();
    await admin.mkdirp(paths.jobs('ahead'));
    await admin.set(paths.namespace('ahead'), encodeJson({ description: '', alarm: { silenceSeconds: 300 }, createdAt: 0 }));
    const dir = mkdtempSync(join(tmpdir(), 'emb-ahead-'));
    const config = { name: 'every2', type: 'node', handler: 'append', cron: '*/2 * * * * *', jobParameter: `${join(dir, 'ledger.txt')},0`, enabled: true };
    await admin.create(paths.job('ahead', 'every2'), encodeJson(parseJobConfig(config)));
    // Claims go out 600 ms ahead of each fire, so the test can act between claim and start.
    ahead = createExecutor({ connect: zkConnect, root, namespace: 'ahead', name: 'claims-ahead', jobsDir: fixtures, dataDir: join(dir, 'data'), claimAheadMs: 600 });
    const started: number[] = [];
    ahead.on('run:started', (e) => started.push(e.fireTime));
    await ahead.start();
    const items = { 'claims-ahead': [0] };
    await admin.create(paths.jobAssignment('ahead', 'every2'), encodeJson({ epoch: 1, allocatorEpoch: 1, items, unassigned: [] }));
    await admin.create(paths.jobApplied('ahead', 'every2'), encodeJson({ epoch: 1, allocatorEpoch: 1, items }));
    await admin.create(paths.executorAssignment('ahead', 'claims-ahead'), encodeJson({ allocatorEpoch: 1, jobs: { every2: { epoch: 1, items: [0] } } }));
    // Catch the shard claimed for a fire still ahead, then disable the job.
    const shard = paths.jobShard('ahead', 'every2', 0);
    let fireTime = 0;
    await eventually(async () => {
      const read = await readShard(admin!, shard);
      if (read?.state.state !== 'running' || read.state.fireTime < Date.now() + 150) throw new Error('not claimed ahead yet');
      fireTime = read.state.fireTime;
    }, { timeoutMs: 10_000, intervalMs: 10 });
    await admin.set(paths.job('ahead', 'every2'), encodeJson(parseJobConfig({ ...config, enabled: false })));
    await eventually(async () => expect((await readShard(admin!, shard))?.state.state).toBe('idle'), { timeoutMs: 3000 });
    await eventually(() => expect(Date.now()).toBeGreaterThan(fireTime + 1000), { timeoutMs: 3000 });
    expect(started).not.toContain(fireTime);
    expect(ahead.history.list('every2').map((r) => r.fireTime)).not.toContain(fireTime);
    expect((await readShard(admin, shard))?.state.last?.fireTime ?? 0).toBeLessThan(fireTime);
  });
});
