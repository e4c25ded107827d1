// The console's allocation preview against the real allocator: a real orrery-sharding process and
// three stand-in executors on a real ZooKeeper; the preview of draining one executor (POST
// …/assignment/preview) equals the assignment the allocator writes once it is drained through the API.
import { afterAll, afterEach, expect, inject, it } from 'vitest';
import { checkAssignment, checkShardingState, createZkClient, encodeJson, parseJobConfig, paths, readJson, type ZkClient } from '@orrery/core';
import { eventually, freePort, uniqueRoot } from '@orrery/core/testing';
import { createNamespace } from '@orrery/console';
import { startProcess, startSimulatedExecutor, stopAllProcesses, type SimulatedExecutor } from '../src/index.js';
import { startClusterConsole, type ClusterTestConsole } from '../../console/src/server/routes/cluster-test-support.js';
import { assignmentRoutes } from '../../console/src/server/routes/assignment.js';
import { executorRoutes } from '../../console/src/server/routes/executors.js';

const zkConnect = inject('zkConnect');
const NS = 'shop';
const JOBS = [
  { name: 'orders', shardingTotalCount: 7, loadLevel: 1 },
  { name: 'reports', shardingTotalCount: 3, loadLevel: 3 },
  { name: 'mail', shardingTotalCount: 4, loadLevel: 2 },
];
const sims: SimulatedExecutor[] = [];
let admin: ZkClient | undefined;
let console_: ClusterTestConsole | undefined;

afterEach(async () => {
  await console_?.close();
  console_ = undefined;
  await stopAllProcesses();
  await Promise.all(sims.splice(0).map((s) => s.close()));
  await admin?.close();
  admin = undefined;
});
afterAll(async () => {
  await stopAllProcesses();
});

async function written(zk: ZkClient): Promise<{ members: string[]; round: number; jobs: Record<string, unknown> }> {
  const state = await readJson(zk, paths.namespaceSharding(NS), checkShardingState);
  const jobs: Record<string, unknown> = {};
  for (const job of JOBS) {
    const read = await readJson(zk, paths.jobAssignment(NS, job.name), checkAssignment);
    jobs[job.name] = read ? { items: read.value.items, unassigned: read.value.unassigned } : undefined;
  }
  return { members: state?.value.members ?? [], round: state?.value.round ?? 0, jobs };
}

it('the preview of draining an executor is what the allocator then writes', async () => {
  const root = uniqueRoot('console-preview');
  admin = createZkClient({ connect: zkConnect, root });
  await admin.start();
  await createNamespace(admin, NS, {});
  for (const job of JOBS) await admin.create(paths.job(NS, job.name), encodeJson(parseJobConfig({ ...job, type: 'shell', command: 'true', enabled: true })));
  for (const name of ['exec-a', 'exec-b', 'exec-c']) sims.push(await startSimulatedExecutor({ connect: zkConnect, root, namespace: NS, name, sessionTimeoutMs: 4000 }));
  const port = await freePort();
  const allocator = startProcess('orrery-sharding', ['--zk', zkConnect, '--root', root, '--http-port', String(port), '--http-host', '127.0.0.1', '--session-timeout', '4', '--debounce-ms', '100']);
  await allocator.waitForLine(/"allocator started"/, 30_000);

  // The allocator has placed every job over the three executors. They all announced themselves
  // before it started, so its first round saw them all and later rounds change nothing (sticky).
  const settled = await eventually(async () => {
    const w = await written(admin!);
    expect(w.members).toEqual(['exec-a', 'exec-b', 'exec-c']);
    for (const job of JOBS) expect(w.jobs[job.name]).toBeDefined();
    return w;
  }, { timeoutMs: 30_000 });

  console_ = await startClusterConsole(zkConnect, 'console-preview', [assignmentRoutes, executorRoutes], { root });
  const c = console_;
  // The console's cache has caught up with what the allocator wrote.
  await eventually(async () => {
    const res = await c.as('vic', { method: 'GET', url: `/api/v1/namespaces/${NS}/assignment` });
    expect(res.statusCode, res.body).toBe(200);
    expect(Object.fromEntries(res.json().jobs.map((j: { job: string; items: unknown; unassigned: Array<{ item: number; reason: string }> }) => [j.job, { items: j.items, unassigned: j.unassigned.map(({ item, reason }) => ({ item, reason })) }]))).toEqual(settled.jobs);
    expect(res.json().members).toEqual(settled.members);
  }, { timeoutMs: 15_000 });

  const preview = await c.as('vic', { method: 'POST', url: `/api/v1/namespaces/${NS}/assignment/preview`, payload: { drain: ['exec-b'] } });
  expect(preview.statusCode, preview.body).toBe(200);
  const expected = preview.json() as { assignment: Record<string, unknown>; members: string[]; moves: Array<{ from: string | null; to: string | null }> };
  expect(expected.members).toEqual(['exec-a', 'exec-c']);
  expect(expected.moves.length).toBeGreaterThan(0);
  for (const move of expected.moves) expect(move.from).toBe('exec-b');

  const drained = await c.as('oli', { method: 'POST', url: `/api/v1/namespaces/${NS}/executors/exec-b/drain` });
  expect(drained.statusCode, drained.body).toBe(200);

  await eventually(async () => {
    const after = await written(admin!);
    expect(after.round).toBeGreaterThan(settled.round);
    expect(after.members).toEqual(expected.members);
    expect(after.jobs).toEqual(expected.assignment);
  }, { timeoutMs: 30_000 });
});
