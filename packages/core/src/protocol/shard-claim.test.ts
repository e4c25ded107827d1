import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createZkClient, type ZkClient } from '../zk/client.js';
import { claimShard, completeShard, markFailover, readShard, type ClaimRequest } from './shard-claim.js';
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
      expect((await completeShard(clients[0]!, w.claim, outcome(fire * 1000, w.claim.state.runId))).recorded).toBe(true);
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

  it('claims in one round trip from a known version, and falls back to a read when it is stale', async () => {
    const zk = clients[2]!;
    const first = await claimShard(zk, '/shards/3', request(2, 1000));
    if (!first.claimed) throw new Error('no claim');
    const done = await completeShard(zk, first.claim, outcome(1000, first.claim.state.runId));
    if (!done.recorded) throw new Error('not recorded');
    const fast = await claimShard(zk, '/shards/3', request(2, 2000, { known: { version: done.version, state: done.state } }));
    expect(fast.claimed).toBe(true);
    if (!fast.claimed) return;
    const again = await completeShard(zk, fast.claim, outcome(2000, fast.claim.state.runId));
    // Known state says this fire already ran: refused without a write.
    expect(await claimShard(zk, '/shards/3', request(2, 2000, { known: again.recorded ? { version: again.version, state: again.state } : undefined }))).toMatchObject({ claimed: false, reason: 'already-ran' });
    // Stale knowledge (someone wrote since): the claim reads and still settles correctly.
    await clients[3]!.set('/shards/3', JSON.stringify({ state: 'idle' }));
    const slow = await claimShard(zk, '/shards/3', request(2, 3000, { known: { version: done.version, state: done.state } }));
    expect(slow.claimed).toBe(true);
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
    expect((await completeShard(clients[0]!, first.claim, outcome(1000, 'stale'))).recorded).toBe(false);
    expect((await readShard(clients[0]!, '/shards/2'))?.state).toMatchObject({ state: 'running', runId: second.claim.state.runId });
    expect((await completeShard(clients[1]!, second.claim, outcome(1000, second.claim.state.runId))).recorded).toBe(true);
  });

  it('lets only a failover claim of the marked fire take a failover mark, with a larger token, once', async () => {
    const crashed = await claimShard(clients[0]!, '/shards/failover', request(0, 5000));
    if (!crashed.claimed) throw new Error('no claim');
    const read = await readShard(clients[1]!, '/shards/failover');
    if (read?.state.state !== 'running') throw new Error('not running');
    expect(await markFailover(clients[1]!, '/shards/failover', { state: read.state, version: read.version })).toBe(true);
    // A second mark from the same read loses its compare-and-set.
    expect(await markFailover(clients[2]!, '/shards/failover', { state: read.state, version: read.version })).toBe(false);
    // A cron claim of a later fire is refused while the crashed fire waits for its re-run.
    expect(await claimShard(clients[1]!, '/shards/failover', request(1, 6000))).toMatchObject({ claimed: false, reason: 'failover-pending', mark: { fireTime: 5000, runId: 'run-0-5000' } });
    // A failover claim of another fire time is refused too.
    expect(await claimShard(clients[1]!, '/shards/failover', request(1, 4000, { failover: true }))).toMatchObject({ claimed: false, reason: 'failover-pending' });
    // Two takers race for the mark: exactly one wins.
    const takers = await Promise.all([1, 2, 3].map((i) => claimShard(clients[i]!, '/shards/failover', request(i, 5000, { failover: true, attempt: 2, runId: `fo-${i}` }))));
    const won = takers.filter((t) => t.claimed);
    expect(won).toHaveLength(1);
    if (!won[0]?.claimed) throw new Error('no winner');
    expect(won[0].claim.fencingToken).toBeGreaterThan(crashed.claim.fencingToken);
    expect(won[0].claim.state).toMatchObject({ fireTime: 5000, attempt: 2 });
    // The crashed run cannot record; the re-run can; a late failover claim then finds it ran.
    expect((await completeShard(clients[0]!, crashed.claim, outcome(5000, 'run-0-5000'))).recorded).toBe(false);
    expect((await completeShard(clients[1]!, won[0].claim, outcome(5000, won[0].claim.state.runId))).recorded).toBe(true);
    expect(await claimShard(clients[1]!, '/shards/failover', request(1, 5000, { failover: true }))).toMatchObject({ claimed: false, reason: 'already-ran' });
  });
});
