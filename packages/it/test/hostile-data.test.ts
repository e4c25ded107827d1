// ZooKeeper data written by hand or half-deleted, against a real executor process, a real allocator
// and a real ZooKeeper: nothing is re-created, nothing is fatal for the rest of the namespace, and
// every bad node is reported, repaired or re-planned instead of silently stopping an item.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { checkApplied, encodeJson, paths, readJson, readShard, type Assignment } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { stopAllProcesses, type RunningProcess } from '../src/index.js';
import { NS, startCluster, type Cluster } from './executor-support.js';

const zkConnect = inject('zkConnect');
let c: Cluster;
let e1: RunningProcess & { port: number };
let allocator: RunningProcess;

beforeAll(async () => {
  c = await startCluster('hostile-data', zkConnect);
  e1 = await c.startExecutor('e1');
  allocator = await c.startAllocator();
  await c.waitMembers(1);
});
afterAll(async () => {
  await c.close();
  await stopAllProcesses();
});

const metric = async (name: string): Promise<number> => {
  const text = await (await fetch(`http://127.0.0.1:${e1.port}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) if (line.startsWith(name)) total += Number(line.split(' ').pop());
  return total;
};

async function everySecond(name: string, shards = 1): Promise<void> {
  await c.apply({ name, type: 'shell', cron: '* * * * * *', shardingTotalCount: shards, command: 'true', enabled: true });
  await c.waitApplied(name);
}

async function ranSince(name: string, item: number, since: number): Promise<void> {
  await eventually(async () => {
    const last = (await readShard(c.zk, paths.jobShard(NS, name, item)))?.state.last;
    expect(last?.status).toBe('succeeded');
    expect(last!.startedAt).toBeGreaterThan(since);
  }, { timeoutMs: 20_000 });
}

describe('a deleted job stays deleted', () => {
  it('delete --force of an enabled, running job: no process brings its node back, and the namespace still reads', async () => {
    await everySecond('doomed', 2);
    await ranSince('doomed', 0, 0);
    const deleted = await c.cli('delete', 'doomed', '--force');
    expect(deleted.code, deleted.stderr).toBe(0);
    // The allocator drops the job from e1's summary; e1 then closes its runtime.
    await eventually(async () => {
      const summary = await readJson<{ jobs: Record<string, unknown> }>(c.zk, paths.executorAssignment(NS, 'e1'));
      expect(summary?.value.jobs.doomed).toBeUndefined();
    }, { timeoutMs: 20_000 });
    // Whatever e1 still does for the job (a watch firing, a claim, its latch) must not re-create it.
    expect(await c.zk.exists(paths.job(NS, 'doomed'))).toBeNull();
    await everySecond('witness');
    await ranSince('witness', 0, Date.now());
    expect(await c.zk.exists(paths.job(NS, 'doomed'))).toBeNull();
    const jobs = await c.cli('get', 'jobs');
    expect(jobs.code, jobs.stderr).toBe(0);
    expect(jobs.stdout).not.toContain('doomed');
    expect((await c.cli('get', 'assignment')).code).toBe(0);
  });
});

describe('hand-written nodes', () => {
  it('lists a corrupt or empty job and a hand-made presence as broken, and lets the CLI overwrite or delete them', async () => {
    await c.zk.create(paths.job(NS, 'garbage'), 'not json {');
    await c.zk.create(paths.job(NS, 'empty'));
    await c.zk.mkdirp(paths.executor(NS, 'ghost'));
    await c.zk.create(paths.executorPresence(NS, 'ghost'), '{"host":');

    const table = await c.cli('get', 'jobs');
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/garbage .*BROKEN: not valid JSON/);
    expect(table.stdout).toMatch(/empty .*BROKEN: empty/);
    expect(table.stderr).toContain('2 broken job(s)');
    const json = await c.cli('get', 'jobs', '-o', 'json');
    expect(JSON.parse(json.stdout)).toContainEqual({ name: 'garbage', broken: expect.stringContaining('not valid JSON') });
    const executors = await c.cli('get', 'executors');
    expect(executors.code, executors.stderr).toBe(0);
    expect(executors.stdout).toMatch(/ghost .*BROKEN: presence is not valid JSON/);
    const assignment = await c.cli('get', 'assignment');
    expect(assignment.code, assignment.stderr).toBe(0);
    expect(assignment.stdout).toMatch(/garbage .*broken: its config is not valid JSON/);

    const disable = await c.cli('disable', 'garbage');
    expect(disable.code).toBe(1);
    expect(disable.stderr).toContain("job 'garbage' in namespace 'jobs' is broken");
    expect(disable.stderr).toContain('apply -f FILE');

    // The allocator says what is wrong, once per bad write, and carries on with the rest.
    await allocator.waitForLine(/ignoring a job whose config is not valid JSON.*garbage|garbage.*ignoring a job whose config is not valid JSON/);
    await allocator.waitForLine(/presence node that is not ephemeral/);
    expect(allocator.lines.filter((l) => /executor lost/.test(l) && l.includes('ghost'))).toEqual([]);

    const file = join(c.dir, 'repair.yaml');
    writeFileSync(file, 'jobs:\n  - name: garbage\n    type: shell\n    command: "true"\n');
    const applied = await c.cli('apply', '-f', file);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('! replace   garbage (its stored config is not valid JSON');
    expect((await c.cli('get', 'job', 'garbage')).code).toBe(0);
    const removed = await c.cli('delete', 'empty');
    expect(removed.code, removed.stderr).toBe(0);
    expect(await c.zk.exists(paths.job(NS, 'empty'))).toBeNull();
    await c.zk.deleteRecursive(paths.executor(NS, 'ghost'));
    // A hand-made presence going away is not an executor lost.
    await eventually(async () => expect(await c.zk.exists(paths.executor(NS, 'ghost'))).toBeNull());
    expect(allocator.lines.filter((l) => /executor lost/.test(l))).toEqual([]);
  });

  it('refuses an assignment naming an executor that is not online; the allocator re-plans and the item runs', async () => {
    await everySecond('ghostly', 2);
    const before = (await c.assignment('ghostly'))!;
    const forged: Assignment = { ...before, epoch: before.epoch + 1, items: { e1: [0], nobody: [1] } };
    const stat = (await c.zk.exists(paths.jobAssignment(NS, 'ghostly')))!;
    await c.zk.set(paths.jobAssignment(NS, 'ghostly'), encodeJson(forged), stat.version);
    await e1.waitForLine(/assignment refused; asking the allocator to re-plan the job/);
    expect(e1.lines.find((l) => l.includes('assignment refused'))).toContain('nobody');
    expect(await metric('orrery_executor_assignments_refused_total')).toBeGreaterThanOrEqual(1);
    // The allocator starts again from what ZooKeeper holds: every item back on e1, at a newer epoch.
    await eventually(async () => {
      const now = (await c.assignment('ghostly'))!;
      expect(now.epoch).toBeGreaterThan(forged.epoch);
      expect(now.items).toEqual({ e1: [0, 1] });
      expect((await readJson(c.zk, paths.jobApplied(NS, 'ghostly'), checkApplied))?.value.epoch).toBe(now.epoch);
    }, { timeoutMs: 20_000 });
    await ranSince('ghostly', 1, Date.now());
  });

  it('refuses an assignment that is not valid JSON, and the allocator writes a newer one', async () => {
    const applied = (await readJson(c.zk, paths.jobApplied(NS, 'ghostly'), checkApplied))!.value;
    await c.zk.set(paths.jobAssignment(NS, 'ghostly'), 'garbage');
    await e1.waitForLine(/the assignment node holds invalid data/);
    await eventually(async () => {
      const now = (await c.assignment('ghostly'))!;
      expect(now.epoch).toBeGreaterThan(applied.epoch);
      expect((await readJson(c.zk, paths.jobApplied(NS, 'ghostly'), checkApplied))?.value.epoch).toBe(now.epoch);
    }, { timeoutMs: 20_000 });
    await allocator.waitForLine(/a job assignment node is not valid JSON/);
    await ranSince('ghostly', 0, Date.now());
  });

  it('resets a garbage shard node (the job leader), counting the fires it cost, and the item runs again', async () => {
    await everySecond('shardy');
    await ranSince('shardy', 0, 0);
    const resetsBefore = await metric('orrery_executor_shard_nodes_reset_total');
    await c.zk.set(paths.jobShard(NS, 'shardy', 0), '{"state":"weird"}');
    await e1.waitForLine(/reset a shard node that held invalid data/);
    expect(await metric('orrery_executor_shard_nodes_reset_total')).toBeGreaterThan(resetsBefore);
    await ranSince('shardy', 0, Date.now());
    // Fires that met the garbage (if any) were counted as not run, never lost silently.
    const skipped = e1.lines.filter((l) => l.includes('"reason":"bad-shard"')).length;
    expect(await metric('orrery_executor_fires_not_run_total{outcome="bad-shard"}')).toBe(skipped);
  });
});
