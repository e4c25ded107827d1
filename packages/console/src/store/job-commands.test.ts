// runJobNow and stopJob write commands through the one schema and the one path builder, against a
// real ZooKeeper: what they write is what executors read; what the schema refuses is never written.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { checkCommandNode, createZkClient, decodeJson, encodeJson, matchPath, parseJobConfig, paths, type ZkClient } from '@orrery/core';
import { uniqueRoot } from '@orrery/core/testing';
import { createNamespace } from './namespaces.js';
import { runJobNow, stopJob } from './jobs.js';

const zkConnect = inject('zkConnect');
const root = uniqueRoot('job-commands');
const NS = 'cmdstore';
let zk: ZkClient;

beforeAll(async () => {
  zk = createZkClient({ connect: zkConnect, root });
  await zk.start();
  await createNamespace(zk, NS);
  await zk.mkdirp(paths.jobs(NS));
  await zk.create(paths.job(NS, 'j'), encodeJson(parseJobConfig({ name: 'j', type: 'shell', command: 'true', enabled: true, shardingTotalCount: 3 })));
  // An owner that is online, as the allocator and an executor would leave it.
  await zk.create(paths.jobAssignment(NS, 'j'), encodeJson({ epoch: 1, allocatorEpoch: 1, items: { e1: [0, 1, 2] }, unassigned: [] }));
  await zk.mkdirp(paths.executor(NS, 'e1'));
  await zk.create(paths.executorPresence(NS, 'e1'), encodeJson({ host: 'h', pid: 1, version: '0', startedAt: 0, handlers: [], tags: [] }), 'ephemeral');
});
afterAll(async () => {
  await zk.close();
});

/** Every command node of job `j`, parsed as an executor reads it. */
async function commands(): Promise<Array<{ path: string; node: ReturnType<typeof checkCommandNode> }>> {
  const names = (await zk.getChildren(paths.jobCommands(NS, 'j'))).sort();
  return Promise.all(names.map(async (name) => {
    const path = paths.jobCommand(NS, 'j', name);
    return { path, node: checkCommandNode(name, decodeJson((await zk.get(path)).data, path)) };
  }));
}

describe('run-now and stop commands', () => {
  it('writes cmd-<seq> nodes that pass the command schema, with who asked', async () => {
    await runJobNow(zk, NS, 'j', { items: [2, 0], param: 'p=1', requestedBy: 'alice' });
    await stopJob(zk, NS, 'j', { items: [1] });
    const written = await commands();
    expect(written.map((c) => matchPath(c.path))).toEqual([
      expect.objectContaining({ kind: 'job-command', job: 'j', command: { form: 'sequential', sequence: 0 } }),
      expect.objectContaining({ kind: 'job-command', job: 'j', command: { form: 'sequential', sequence: 1 } }),
    ]);
    expect(written.map((c) => c.node.ok && c.node.value.command)).toEqual([
      { kind: 'run', items: [2, 0], param: 'p=1', requestedBy: 'alice', requestedAt: expect.any(Number) },
      { kind: 'stop', items: [1], requestedAt: expect.any(Number) },
    ]);
  });

  it.each<[string, () => Promise<unknown>, string, string]>([
    ['a repeated item', () => runJobNow(zk, NS, 'j', { items: [1, 1] }), 'items', 'unique-items'],
    ['an empty item list', () => stopJob(zk, NS, 'j', { items: [] }), 'items', 'min-items'],
    ['an empty requester', () => stopJob(zk, NS, 'j', { requestedBy: '' }), 'requestedBy', 'min-length'],
    ['a parameter that is too long', () => runJobNow(zk, NS, 'j', { param: 'x'.repeat(65_537) }), 'param', 'max-length'],
  ])('refuses %s before writing anything', async (_label, request, field, rule) => {
    const before = await zk.getChildren(paths.jobCommands(NS, 'j'));
    await expect(request()).rejects.toMatchObject({ code: 'validation', details: { issues: [expect.objectContaining({ field, rule })] } });
    expect(await zk.getChildren(paths.jobCommands(NS, 'j'))).toEqual(before);
  });

  it('refuses a job that does not exist and creates no node for it', async () => {
    await expect(stopJob(zk, NS, 'gone')).rejects.toMatchObject({ code: 'not-found' });
    expect(await zk.exists(paths.job(NS, 'gone'))).toBeNull();
  });
});
