import { describe, expect, it } from 'vitest';
import { parseJobConfig, type Assignment, type ExecutorInfo } from '@orrery/core';
import { buildCluster, clusterJobOf, storedAllocation, type ClusterProblem, type ExecutorNodes, type JobNode } from './cluster.js';

const info = (extra: Partial<ExecutorInfo> = {}): ExecutorInfo => ({ host: 'h', pid: 1, version: 'v', startedAt: 0, handlers: [], tags: [], ...extra });
const online = (name: string, extra: Partial<ExecutorInfo> = {}, meta?: ExecutorNodes['meta']): ExecutorNodes => ({
  name, presence: { ok: true, value: info(extra), ephemeral: true }, meta,
});
const job = (name: string, extra: Record<string, unknown> = {}): JobNode => ({ name, config: { ok: true, value: parseJobConfig({ name, type: 'shell', command: 'true', ...extra }) } });

describe('buildCluster', () => {
  const cases: Array<{ name: string; executors: ExecutorNodes[]; jobs: JobNode[]; members: string[]; drained: string[]; jobNames: string[]; problems: Array<Partial<ClusterProblem>> }> = [
    { name: 'online executors and valid jobs take part', executors: [online('a'), online('b')], jobs: [job('j1'), job('j2')], members: ['a', 'b'], drained: [], jobNames: ['j1', 'j2'], problems: [] },
    { name: 'an offline executor (no presence) is left out silently', executors: [{ name: 'a', presence: undefined, meta: undefined }], jobs: [], members: [], drained: [], jobNames: [], problems: [] },
    {
      name: 'a persistent presence is left out and reported', executors: [{ name: 'a', presence: { ok: true, value: info(), ephemeral: false }, meta: undefined }], jobs: [],
      members: [], drained: [], jobNames: [], problems: [{ node: 'presence', executor: 'a', message: expect.stringContaining('not ephemeral') }],
    },
    {
      name: 'unreadable presence data is left out and reported', executors: [{ name: 'a', presence: { ok: false, problem: 'not valid JSON (x)', ephemeral: true }, meta: undefined }], jobs: [],
      members: [], drained: [], jobNames: [], problems: [{ node: 'presence', executor: 'a', message: expect.stringContaining('not valid JSON') }],
    },
    { name: 'meta noTraffic drains', executors: [online('a', {}, { ok: true, value: { noTraffic: true } })], jobs: [], members: ['a'], drained: ['a'], jobNames: [], problems: [] },
    { name: 'a leaving executor is drained', executors: [online('a', { leaving: true })], jobs: [], members: ['a'], drained: ['a'], jobNames: [], problems: [] },
    {
      name: 'invalid meta counts as not drained, and is reported', executors: [online('a', {}, { ok: false, problem: 'invalid: x' })], jobs: [],
      members: ['a'], drained: [], jobNames: [], problems: [{ node: 'meta', executor: 'a' }],
    },
    {
      name: 'a broken job config is left out and reported', executors: [], jobs: [{ name: 'j', config: { ok: false, problem: 'empty (no data)' } }],
      members: [], drained: [], jobNames: [], problems: [{ node: 'job', job: 'j', message: expect.stringContaining('empty (no data)') }],
    },
    {
      name: 'a config naming another job is left out and reported', executors: [], jobs: [{ name: 'j', config: job('other').config }],
      members: [], drained: [], jobNames: [], problems: [{ node: 'job', job: 'j', message: expect.stringContaining("names another job ('other')") }],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const problems: ClusterProblem[] = [];
      const cluster = buildCluster(c.executors, c.jobs, (p) => problems.push(p));
      expect(cluster.executors.map((e) => e.name)).toEqual(c.members);
      expect(cluster.executors.filter((e) => e.noTraffic).map((e) => e.name)).toEqual(c.drained);
      expect(cluster.jobs.map((j) => j.name)).toEqual(c.jobNames);
      expect(problems).toEqual(c.problems.map((p) => expect.objectContaining(p)));
    });
  }

  it('takes the allocator fields of a job config', () => {
    const config = parseJobConfig({ name: 'n', type: 'node', handler: 'h', shardingTotalCount: 3, loadLevel: 7, preferList: ['@gpu'], useDispreferList: false, enabled: true });
    expect(clusterJobOf(config)).toEqual({ name: 'n', enabled: true, type: 'node', handler: 'h', shardingTotalCount: 3, localMode: false, loadLevel: 7, preferList: ['@gpu'], useDispreferList: false });
  });
});

describe('storedAllocation', () => {
  it('keeps the members and the assignments of the jobs that take part', () => {
    const cluster = buildCluster([online('a')], [job('j1'), job('j2')]);
    const a: Assignment = { epoch: 1, allocatorEpoch: 1, items: { a: [0] }, unassigned: [], writtenAt: 0 };
    const gone: Assignment = { ...a, items: { a: [0, 1] } };
    expect(storedAllocation(['a'], new Map([['j1', a], ['deleted', gone]]), cluster)).toEqual({ members: ['a'], jobs: { j1: { items: { a: [0] }, unassigned: [] } } });
    expect(storedAllocation(undefined, new Map(), cluster)).toEqual({ members: [], jobs: {} });
  });
});
