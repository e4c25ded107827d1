// Job-average-first placement with real processes: three orrery-executor processes, a real
// orrery-sharding and ZooKeeper; `orrery -n NS get assignment` (the CLI) shows a 6-shard job spread
// 2/2/2 next to a pinned job and a localMode job (a user's report: it was 3/2/1).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually } from '@orrery/core/testing';
import { stopAllProcesses } from '../src/index.js';
import { startCluster, type Cluster } from './executor-support.js';

const zkConnect = inject('zkConnect');
let c: Cluster;

beforeAll(async () => {
  c = await startCluster('allocation-spread', zkConnect);
});
afterAll(async () => {
  await c.close();
  await stopAllProcesses();
});

/** The CLI's table row of a job: executor → items, from `e1: 0,3; e2: 1,4`. */
function itemsOf(table: string, job: string): Record<string, number[]> {
  const row = table.split('\n').find((line) => line.split(/\s+/)[0] === job);
  expect(row, `row of ${job} in:\n${table}`).toBeDefined();
  const out: Record<string, number[]> = {};
  for (const [, executor, items] of row!.matchAll(/(e\d): ([\d,]+)/g)) out[executor!] = items!.split(',').map(Number);
  return out;
}

describe('allocation spread (real executors, allocator and ZooKeeper)', () => {
  it('spreads a 6-shard job 2/2/2 over three executors online from the start, pinned job on e3 only, localMode one per executor', async () => {
    const common = { type: 'shell' as const, cron: '0 0 0 1 1 *', command: 'true', enabled: true };
    await c.apply({ ...common, name: 'spread', shardingTotalCount: 6 });
    await c.apply({ ...common, name: 'local', localMode: true });
    await c.apply({ ...common, name: 'pinned', shardingTotalCount: 2, preferList: ['e3'], useDispreferList: false });
    await Promise.all(['e1', 'e2', 'e3'].map((e) => c.startExecutor(e)));
    await c.startAllocator();
    await c.waitMembers(3);
    for (const job of ['spread', 'local', 'pinned']) await c.waitApplied(job);

    await eventually(async () => {
      const out = await c.cli('get', 'assignment');
      expect(out.code, out.stderr).toBe(0);
      const spread = itemsOf(out.stdout, 'spread');
      expect(Object.fromEntries(Object.entries(spread).map(([e, items]) => [e, items.length]))).toEqual({ e1: 2, e2: 2, e3: 2 });
      expect(Object.values(spread).flat().sort()).toEqual([0, 1, 2, 3, 4, 5]);
      expect(itemsOf(out.stdout, 'pinned')).toEqual({ e3: [0, 1] });
      const local = itemsOf(out.stdout, 'local');
      expect(Object.keys(local).sort()).toEqual(['e1', 'e2', 'e3']);
      expect(Object.values(local).flat().sort()).toEqual([0, 1, 2]);
    }, { timeoutMs: 30_000 });
  }, 120_000);
});
