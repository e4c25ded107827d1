import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createZkClient, type ZkClient } from '../zk/client.js';
import { claimShard, completeShard, readShard, type ClaimRequest } from './shard-claim.js';
import { uniqueRoot } from '../testing/index.js';
import type { ShardOutcome } from '../schemas/shard.js';

const zkConnect = inject('zkConnect');
const clients: ZkClient[] = [];
beforeAll(async () => {
  const root = uniqueRoot('claim');
  for (let i = 0; i < 4; i += 1) {
    const zk = createZkClient({ connect: zkConnect, root });
    await zk.start();
    clients.push(zk);
  }
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

const request = (i: number, fireTime: number, extra: Partial<ClaimRequest> = {}): ClaimRequest => ({
  executor: `e${i}`, session: clients[i]!.sessionId!, runId: `run-${i}-${fireTime}`, fireTime, startedAt: fireTime, ...extra,
});
const outcome = (fireTime: number, runId: string): ShardOutcome => ({
  status: 'succeeded', exitCode: 0, startedAt: fireTime, endedAt: fireTime + 1, durationMs: 1, executor: 'e', runId, fireTime, attempt: 1, fencingToken: 0, message: '', stdoutTail: '', stderrTail: '',
});

describe('shard claim protocol against a real ZooKeeper', () => {
  it('lets exactly one of many concurrent claimers run a fire, and records its outcome', async () => {
    await clients[0]!.mkdirp('/shards');
    for (let fire = 1; fire <= 20; fire += 1) {
      const results = await Promise.all(clients.map((zk, i) => claimShard(zk, '/shards/0', request(i, fire * 1000))));
      const winners = results.filter((r) => r.claimed);
      expect(winners).toHaveLength(1);
      const w = winners[0]!;
      if (!w.claimed) continue;
      expect(await completeShard(clients[0]!, w.claim, outcome(fire * 1000, w.claim.state.runId))).toBe(true);
    }
    const final = await readShard(clients[0]!, '/shards/0');
    expect(final?.state).toMatchObject({ state: 'idle', last: { fireTime: 20_000 } });
  });

  it('refuses a claim for a fire that already ran, and while a run holds the shard', async () => {
    const a = await claimShard(clients[0]!, '/shards/1', request(0, 5000));
    expect(a.claimed).toBe(true);
    const busy = await claimShard(clients[1]!, '/shards/1', request(1, 6000));
    expect(busy).toMatchObject({ claimed: false, reason: 'running', holder: { executor: 'e0', fireTime: 5000 } });
    if (!a.claimed) return;
    await completeShard(clients[0]!, a.claim, outcome(5000, a.claim.state.runId));
    expect(await claimShard(clients[1]!, '/shards/1', request(1, 5000))).toMatchObject({ claimed: false, reason: 'already-ran' });
    expect(await claimShard(clients[1]!, '/shards/1', request(1, 4000))).toMatchObject({ claimed: false, reason: 'already-ran' });
    const rerun = await claimShard(clients[1]!, '/shards/1', request(1, 5000, { rerun: true, attempt: 2 }));
    expect(rerun.claimed).toBe(true);
  });

  it('gives a stale run no way to record its outcome, and later claims larger fencing tokens', async () => {
    const first = await claimShard(clients[0]!, '/shards/2', request(0, 1000));
    if (!first.claimed) throw new Error('no claim');
    // A takeover behind the first run's back (as a failover would do).
    const node = await readShard(clients[1]!, '/shards/2');
    await clients[1]!.set('/shards/2', JSON.stringify({ state: 'idle' }), node!.version);
    const second = await claimShard(clients[1]!, '/shards/2', request(1, 1000));
    if (!second.claimed) throw new Error('no second claim');
    expect(second.claim.fencingToken).toBeGreaterThan(first.claim.fencingToken);
    expect(await completeShard(clients[0]!, first.claim, outcome(1000, 'stale'))).toBe(false);
    expect((await readShard(clients[0]!, '/shards/2'))?.state).toMatchObject({ state: 'running', runId: second.claim.state.runId });
    expect(await completeShard(clients[1]!, second.claim, outcome(1000, second.claim.state.runId))).toBe(true);
  });
});
