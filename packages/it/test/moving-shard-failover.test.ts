// An item that moves (its executor drained) while it runs waits for that run to end before its new
// owner may start it. If the old owner dies meanwhile, its run never ends by itself: the job leader
// must notice the death, mark the run for failover and apply the move — not wait for ever on a shard
// node that no longer changes (the scale bench once left a job so, its shard `running` under a dead
// session and no re-run).
import { join } from 'node:path';
import { expect, inject, it } from 'vitest';
import { paths, readJson } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { NS, useTwoExecutorCluster } from './executor-support.js';

const zkConnect = inject('zkConnect');
const cluster = useTwoExecutorCluster('moving-shard', zkConnect);

it('a moving item whose old owner dies mid-run is failed over to its new owner', async () => {
  const c = cluster();
  const ledger = join(c.dir, 'moving.ledger');
  await c.apply({
    name: 'moving', enabled: true, type: 'shell', shardingTotalCount: 1, failover: true,
    preferList: ['e1'], useDispreferList: true,
    command: `echo "START $ORRERY_EXECUTOR $ORRERY_TRIGGER" >> ${ledger}; sleep 120`,
  });
  await c.waitApplied('moving');
  expect((await c.cli('run', 'moving')).code).toBe(0);
  await eventually(() => expect(c.ledger(ledger)).toEqual(['START e1 run-now']), { timeoutMs: 15_000 });

  // Drained, e1 loses the item to e2; the move waits for e1's run.
  expect((await c.cli('drain', 'e1')).code).toBe(0);
  await eventually(() => {
    const said = [...c.executors.values()].some((p) => p.lines.some((l) => l.includes('"msg":"waiting for a moving shard to finish its run"')));
    expect(said).toBe(true);
  }, { timeoutMs: 20_000 });

  // e1's process dies (its guard kills the run and ends its session): the run re-runs on e2.
  c.executors.get('e1')!.kill('SIGKILL');
  await eventually(() => expect(c.ledger(ledger)).toEqual(['START e1 run-now', 'START e2 failover']), { timeoutMs: 30_000 });
  const applied = await readJson<{ items: Record<string, number[]> }>(c.zk, paths.jobApplied(NS, 'moving'));
  expect(applied?.value.items).toEqual({ e2: [0] });
});
