// orrery-executor as real processes, with a real orrery-sharding, a real ZooKeeper and real shells.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { join } from 'node:path';
import { paths, readShard } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { stopAllProcesses } from '../src/index.js';
import { NS, startCluster, waitIdle, type Cluster } from './executor-support.js';

const zkConnect = inject('zkConnect');
let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
  await stopAllProcesses();
});

describe('orrery-executor', () => {
  it('runs every (fire time, item) of a 6-shard every-second shell job exactly once, on the executor its assignment names', async () => {
    cluster = await startCluster('exec-basic', zkConnect);
    const c = cluster;
    const ledger = join(c.dir, 'ledger.txt');
    await c.apply({ name: 'tick', type: 'shell', cron: '* * * * * *', shardingTotalCount: 6, enabled: false, command: `echo "$ORRERY_SHARD_ITEM $ORRERY_FIRE_TIME $ORRERY_EXECUTOR" >> ${ledger}` });
    await Promise.all(['e1', 'e2', 'e3'].map((e) => c.startExecutor(e)));
    await c.startAllocator();
    await c.waitMembers(3);
    await c.apply({ name: 'tick', type: 'shell', cron: '* * * * * *', shardingTotalCount: 6, enabled: true, command: `echo "$ORRERY_SHARD_ITEM $ORRERY_FIRE_TIME $ORRERY_EXECUTOR" >> ${ledger}` });
    await c.waitApplied('tick');
    const assignment = (await c.assignment('tick'))!;
    const owner = new Map<number, string>();
    for (const [e, items] of Object.entries(assignment.items)) for (const i of items) owner.set(i, e);
    expect(owner.size).toBe(6);
    // Ten seconds of firing.
    await eventually(() => expect(new Set(c.ledger(ledger).map((l) => l.split(' ')[1])).size).toBeGreaterThanOrEqual(11), { timeoutMs: 20_000 });
    await c.cli('disable', 'tick');
    await waitIdle(c.zk, 'tick', 6);
    const lines = c.ledger(ledger).map((l) => l.split(' '));
    const seen = new Map<string, number>();
    for (const [item, fireTime, executor] of lines) {
      const key = `${fireTime}#${item}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      expect(executor, key).toBe(owner.get(Number(item)));
      expect(Number(fireTime) % 1000).toBe(0);
    }
    expect([...seen.entries()].filter(([, n]) => n > 1)).toEqual([]);
    // Every fire time strictly inside the window ran all six items — but for a fire an executor
    // reported skipping by policy (on a loaded machine the previous second's run can still be going:
    // `overlap: skip`). Nothing is missed silently, and most fires run whole.
    const skipped = new Map<string, string>();
    for (const p of c.executors.values()) {
      for (const l of p.lines) {
        if (l.includes('"fires skipped"')) {
          // A summary of skips not logged one by one (a burst): every fire time it spans, every item.
          const e = JSON.parse(l) as { job: string; firstFireTime: number; lastFireTime: number; reason: string };
          expect(['overlap', 'misfire', 'not-connected']).toContain(e.reason);
          for (let f = e.firstFireTime; f <= e.lastFireTime; f += 1000) for (let i = 0; i < 6; i += 1) if (e.job === 'tick') skipped.set(`${f}#${i}`, e.reason);
          continue;
        }
        if (!l.includes('"fire skipped"')) continue;
        const e = JSON.parse(l) as { job: string; item?: number; fireTime: number; reason: string };
        // `disabled`: a fire caught by the disable at the end of the window.
        expect(['overlap', 'misfire', 'not-connected', 'disabled']).toContain(e.reason);
        for (let i = 0; i < 6; i += 1) if (e.job === 'tick' && (e.item === undefined || e.item === i)) skipped.set(`${e.fireTime}#${i}`, e.reason);
      }
    }
    // What an executor logged around a fire time (for a failure message that explains itself).
    const said = (name: string, f: number): string => c.executors.get(name)!.lines
      .filter((l) => /"level":(40|50|60)/.test(l) || l.includes(String(f)) || l.includes('fence')).join('\n');
    const ran = [...new Set(lines.map(([, f]) => Number(f)))].sort((a, b) => a - b);
    const fires: number[] = [];
    for (let f = ran[0]!; f <= ran.at(-1)!; f += 1000) fires.push(f);
    let whole = 0;
    for (const f of fires.slice(1, -1)) {
      for (let i = 0; i < 6; i += 1) if (!skipped.has(`${f}#${i}`)) expect(seen.get(`${f}#${i}`), `${f}#${i} (${owner.get(i)} said: ${said(owner.get(i)!, f)})`).toBe(1);
      if ([0, 1, 2, 3, 4, 5].every((i) => seen.get(`${f}#${i}`) === 1)) whole += 1;
    }
    if (skipped.size > 0) console.log(`[executor] fires reported skipped by policy: ${[...skipped].map(([k, r]) => `${k} (${r})`).join(' ')}; fires run: ${fires[0]}…${fires.at(-1)}`);
    expect(whole).toBeGreaterThanOrEqual(8);
  });
});
