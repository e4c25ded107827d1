// The cost bench's reading of ZooKeeper's transaction log (bench/cost/zk-log.ts, zk-ledger.ts), on a
// real server's log: shard writes are attributed to their fires by the data written, whatever
// interval they fall in; anything else counts where it falls.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createZkClient, encodeJson, paths, type ShardOutcome, type ShardState, type ZkClient } from '@orrery/core';
import { startZooKeeper, uniqueRoot, type ZooKeeperServer } from '@orrery/core/testing';
import { ZkDiskMeter, type ZkLogRecord } from '../bench/cost/zk-log.js';
import { TransactionLedger } from '../bench/cost/zk-ledger.js';

const NS = 'ledger';
const FIRE = 1_800_000_000_000;
let server: ZooKeeperServer;
let zk: ZkClient;
beforeAll(async () => {
  server = await startZooKeeper();
  zk = createZkClient({ connect: server.connectString, root: uniqueRoot('bench-ledger') });
  await zk.start();
});
afterAll(async () => {
  await zk?.close();
  await server?.stop();
});

const claim = (fireTime: number): ShardState => ({ state: 'running', executor: 'e1', session: '1', runId: `r-${fireTime}`, fireTime, startedAt: fireTime, attempt: 1 });
const outcome = (fireTime: number): ShardOutcome => ({ status: 'succeeded', exitCode: 0, startedAt: fireTime, endedAt: fireTime + 1, durationMs: 1, executor: 'e1', runId: `r-${fireTime}`, fireTime, attempt: 1, fencingToken: 1, message: '' });
const completion = (fireTime: number): ShardState => ({ state: 'idle', last: outcome(fireTime) });

describe('the cost bench\'s transaction ledger', () => {
  it('counts the window\'s claims and completions wherever they fall, other transactions only in the interval, and leaves out the writes of other fires', async () => {
    const seen: ZkLogRecord[] = [];
    const ledger = new TransactionLedger();
    const meter = new ZkDiskMeter(join(server.dataDir, 'data', 'version-2'), (r) => { seen.push(r); ledger.onRecord(r); });
    const shard = (item: number): string => paths.jobShard(NS, 'job-1', item);
    const full = (path: string): string => `${zk.options.root}${path}`;
    await zk.mkdirp(paths.jobShards(NS, 'job-1'));
    for (const item of [0, 1]) await zk.create(shard(item), encodeJson({ state: 'idle' }));
    meter.read();
    ledger.begin(zk.options.root);
    seen.length = 0;

    // Before the interval: the window's first claim (counted), and the completion of the fire before it (not).
    await zk.set(shard(0), encodeJson(claim(FIRE)));
    await zk.set(shard(1), encodeJson(completion(FIRE - 1000)));
    const from = await server.zxid();
    meter.read(from);
    // In the interval: a write of another node (other), the window's completion, a claim of the fire after it (edge).
    await zk.create('/elsewhere', encodeJson({ any: 'thing' }));
    await zk.set(shard(0), encodeJson(completion(FIRE)));
    await zk.set(shard(1), encodeJson(claim(FIRE + 1000)));
    const to = await server.zxid();
    meter.read(to);
    // After it: the window's second run, claimed and completed (counted), and a write of another node (not).
    await zk.set(shard(1), encodeJson(claim(FIRE + 500)));
    await zk.set(shard(1), encodeJson(completion(FIRE + 500)));
    await zk.set('/elsewhere', encodeJson({ any: 'more' }));
    meter.read(await server.zxid());

    const setData = seen.filter((r) => r.type === 5);
    expect(setData.map((r) => r.setData?.path)).toEqual([0, 1, 0, 1, 1, 1].map((i) => full(shard(i))).concat(full('/elsewhere')));
    expect(JSON.parse(setData[2]!.setData!.data!.toString('utf8'))).toEqual(completion(FIRE));
    expect(seen.map((r) => r.zxid)).toEqual([...seen.map((r) => r.zxid)].sort((a, b) => a - b));

    expect(ledger.completions(FIRE, FIRE + 1000)).toBe(2);
    const t = ledger.tally(FIRE, FIRE + 1000, from, to);
    expect(t).toMatchObject({ claims: 2, completions: 2, otherShardWrites: 0, other: 1, edge: 1, total: 5 });
    const counted = [seen[0], seen[2], seen[3], seen[5], seen[6]];
    expect(t.bytes).toBe(counted.reduce((n, r) => n + r!.bytes, 0));
  });
});
