// The job leader's apply turn (LEADER_APPLIES_AT_ONCE): a pass that finds a crashed run applies the
// assignment at once, while the other jobs' passes wait for their turn to apply. Real ZooKeeper; the
// turn is a gate the test opens.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  checkApplied, createEmitter, createLeaderLatch, createMetrics, createZkClient, encodeJson, parseJobConfig, paths, readJson, readShard,
  type LeaderLatch, type ZkClient,
} from '@orrery/core';
import { eventually, uniqueRoot } from '@orrery/core/testing';
import type { ExecutorEvents } from './executor-events.js';
import { createExecutorMetrics } from './executor-metrics.js';
import { createJobLeader, type JobLeader } from './job-leader.js';

const zkConnect = inject('zkConnect');
const root = uniqueRoot('job-leader');
const NS = 'jl';
const ME = 'leader-host';
const GONE = 'gone-host';

let zk: ZkClient;
const latches: LeaderLatch[] = [];
const leaders: JobLeader[] = [];

/** A turn that waits until the test opens it, counting the passes that asked for it. */
function gate(): { turn(apply: () => Promise<void>): Promise<void>; asked: number; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => { open = resolve; });
  const g = {
    asked: 0,
    open: () => open(),
    async turn(apply: () => Promise<void>): Promise<void> {
      g.asked += 1;
      await opened;
      await apply();
    },
  };
  return g;
}

/**
 * A job whose one item moves from an executor that is gone to this one (assignment epoch 2,
 * applied still epoch 1), its shard node idle or holding that executor's unfinished run.
 */
async function movingJob(job: string, shard: 'idle' | 'crashed-run'): Promise<void> {
  await zk.create(paths.job(NS, job), encodeJson(parseJobConfig({ name: job, type: 'shell', command: 'true', cron: '0 0 1 1 *', enabled: true, failover: true })));
  await zk.create(paths.jobAssignment(NS, job), encodeJson({ epoch: 2, allocatorEpoch: 1, items: { [ME]: [0] }, unassigned: [] }));
  await zk.create(paths.jobApplied(NS, job), encodeJson({ epoch: 1, allocatorEpoch: 1, items: { [GONE]: [0] } }));
  await zk.mkdirp(paths.jobCommands(NS, job));
  await zk.mkdirp(paths.jobShards(NS, job));
  const state = shard === 'idle'
    ? { state: 'idle' }
    : { state: 'running', executor: GONE, session: '7a7a7a7a7a7a7a7a', runId: 'crashed-run', fireTime: 1_000, startedAt: 1_000, attempt: 1 };
  await zk.create(paths.jobShard(NS, job, 0), encodeJson(state));
}

/** The job leader of `job` on this test's session, leading once it returns. */
async function leaderOf(job: string, applyTurn: (apply: () => Promise<void>) => Promise<void>): Promise<JobLeader> {
  const latch = createLeaderLatch(zk, paths.jobLeader(NS, job), { id: ME });
  latches.push(latch);
  await latch.start();
  await latch.awaitLeadership(10_000);
  const config = parseJobConfig({ name: job, type: 'shell', command: 'true', cron: '0 0 1 1 *', enabled: true, failover: true });
  const leader = createJobLeader({
    zk, namespace: NS, job, latch, applyTurn, config: () => config,
    logger: pino({ level: 'silent' }),
    emitter: createEmitter<ExecutorEvents>(),
    metrics: createExecutorMetrics(createMetrics({ processMetrics: false })),
    isAlive: async (executor, session) => (await zk.exists(paths.executorPresence(NS, executor)))?.ephemeralOwner === session,
  });
  leaders.push(leader);
  return leader;
}

const appliedEpoch = async (job: string): Promise<number | undefined> => (await readJson(zk, paths.jobApplied(NS, job), checkApplied))?.value.epoch;

beforeAll(async () => {
  zk = createZkClient({ connect: zkConnect, root });
  await zk.start();
  await zk.mkdirp(paths.jobs(NS));
  await zk.mkdirp(paths.executor(NS, ME));
  await zk.create(paths.executorPresence(NS, ME), '{}', 'ephemeral');
}, 30_000);

afterAll(async () => {
  for (const l of leaders) l.close();
  await Promise.all(leaders.map((l) => l.settled()));
  for (const l of latches) await l.close();
  await zk?.close();
});

describe('job leader apply turn', () => {
  it('a pass that finds a crashed run applies at once; a pass that does not waits for its turn to apply', async () => {
    await movingJob('crashed', 'crashed-run');
    await movingJob('quiet', 'idle');
    const apply = gate();
    const crashed = await leaderOf('crashed', apply.turn);
    const quiet = await leaderOf('quiet', apply.turn);
    quiet.check();
    crashed.check();

    // The crashed run is marked for failover and its item moves here, while the apply turn is shut.
    await eventually(async () => expect(await appliedEpoch('crashed')).toBe(2));
    expect((await readShard(zk, paths.jobShard(NS, 'crashed', 0)))?.state).toMatchObject({ state: 'failover', runId: 'crashed-run' });
    await crashed.settled();
    expect(apply.asked).toBe(1); // the quiet job's pass only
    expect(await appliedEpoch('quiet')).toBe(1);

    apply.open();
    await eventually(async () => expect(await appliedEpoch('quiet')).toBe(2));
    await quiet.settled();
  });
});
