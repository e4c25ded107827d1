// Namespace stats: the one state per job (table), runs and failures in the window from the shard
// nodes (table), the merge of the executors' tallies (table), the route against a real ZooKeeper
// without a cluster token (the shard-node fallback), and the route against real executors running
// shell jobs in this process (every run counted; an executor that is down, or lies, is named in
// unavailable and the rest still counted; nobody answering falls back to the shard nodes).
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { commandName, encodeJson, paths, waitForEvent, type ShardState } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { createExecutor, type Executor } from '@orrery/executor';
import { startClusterConsole, startPresence, writeAssignment, writeJob, writeShard, type ClusterTestConsole } from './cluster-test-support.js';
import { coverageSentence, historyCounts, jobRuns, jobState, mostFailingFirst, sharedSummaries, statsRoutes, STATS_SUMMARY_TTL_MS, STATS_WINDOW_MS, type JobFacts } from './stats.js';

const NOW = Date.UTC(2025, 5, 1, 12);
const idle = (status: 'succeeded' | 'failed' | 'timed-out' | 'aborted', endedAt = NOW - 3_600_000): ShardState => ({
  state: 'idle', last: { status, exitCode: null, startedAt: endedAt - 1000, endedAt, durationMs: 1000, executor: 'e', runId: `r${endedAt}`, fireTime: endedAt - 1000, attempt: 1, fencingToken: 1, message: status },
});
const running: ShardState = { state: 'running', executor: 'e', session: 's', runId: 'r', fireTime: NOW, startedAt: NOW, attempt: 1 };

describe('jobState and jobRuns (pure)', () => {
  const facts = (extra: Partial<JobFacts>): JobFacts => ({ name: 'j', configOk: true, enabled: true, unassigned: 0, shards: [], ...extra });
  it.each([
    ['broken', facts({ configOk: false, enabled: false })],
    ['disabled', facts({ enabled: false, shards: [idle('failed')] })],
    ['unassigned', facts({ unassigned: 1, shards: [idle('failed')] })],
    ['failing', facts({ shards: [idle('timed-out'), running] })],
    ['running', facts({ shards: [idle('succeeded'), running] })],
    ['healthy', facts({ shards: [idle('succeeded'), undefined] })],
    ['healthy', facts({})],
  ] as const)('%s', (state, input) => {
    expect(jobState(input)).toBe(state);
  });

  it('counts last outcomes in the window and runs in progress', () => {
    expect(jobRuns([idle('failed'), idle('timed-out'), idle('succeeded'), idle('failed', NOW - STATS_WINDOW_MS - 1), running, undefined], NOW))
      .toEqual({ runs: 4, failures: 2, running: 1, lastFailureAt: NOW - 3_600_000 });
  });
});

describe('sharedSummaries', () => {
  it('asks the executors once per 10 s for every caller, again at once when the executors change', async () => {
    let clock = 1_000_000;
    // Offline executors: a round names them unavailable without a request.
    let executors = [{ name: 'e1', online: false, httpUrl: 'http://127.0.0.1:1' }];
    let rounds = 0;
    let asked = 0;
    // Each round (fetchRunSummaries) reads the directory once more than the callers do.
    const directory = { executors: async () => { asked += 1; return executors; }, inProgress: async () => [] };
    const of = sharedSummaries(() => clock, STATS_SUMMARY_TTL_MS)('shop');
    const call = async () => { const before = asked; await of(directory, 0, { clusterToken: 'token' }); rounds += asked - before - 1; };
    await call();
    await call();
    await call();
    clock += STATS_SUMMARY_TTL_MS - 1;
    await call();
    expect(rounds).toBe(1);
    clock += 1;
    await call();
    expect(rounds).toBe(2);
    executors = [...executors, { name: 'e2', online: false, httpUrl: 'http://127.0.0.1:2' }];
    await call();
    expect(rounds).toBe(3);
    await call();
    expect(rounds).toBe(3);
  });
});

describe('historyCounts, mostFailingFirst and coverageSentence (pure)', () => {
  const shards = (runs: number, failures: number, running: number, lastFailureAt: number | null = null) => ({ runs, failures, running, lastFailureAt });
  it.each([
    ['no tally, nothing running', undefined, shards(0, 0, 0), { runs: 0, failures: 0, running: 0, lastFailureAt: null }],
    ['no tally, one running', undefined, shards(1, 0, 1), { runs: 1, failures: 0, running: 1, lastFailureAt: null }],
    ['ended runs plus those in progress', { runs: 7, failures: 2, timedOut: 1, lastFailureAt: 42 }, shards(3, 1, 2, 40), { runs: 9, failures: 2, running: 2, lastFailureAt: 42 }],
    // The executor that ran it did not answer: the shard nodes' lower bound stands.
    ['no tally, but the shard nodes saw runs and a failure', undefined, shards(2, 1, 0, 50), { runs: 2, failures: 1, running: 0, lastFailureAt: 50 }],
    ['a tally below the shard nodes', { runs: 1, failures: 0, timedOut: 0, lastFailureAt: null }, shards(3, 2, 0, 60), { runs: 3, failures: 2, running: 0, lastFailureAt: 60 }],
  ] as const)('%s', (_name, tally, fromShards, want) => {
    expect(historyCounts(tally, fromShards)).toEqual(want);
  });

  it('orders the most failing by failures, then ratio, then the latest failure, then name, and cuts at the limit', () => {
    const j = (job: string, runs: number, failures: number, lastFailureAt: number | null = failures > 0 ? 1 : null) => ({ job, runs, failures, lastFailureAt });
    expect(mostFailingFirst([j('none', 5, 0), j('few', 10, 1), j('many', 10, 4), j('ratio', 4, 4), j('late', 10, 1, 9), j('b', 10, 1), j('a', 10, 1)]).map((x) => x.job))
      .toEqual(['ratio', 'many', 'late', 'a', 'b', 'few']);
    expect(mostFailingFirst(Array.from({ length: 12 }, (_, i) => j(`j${i}`, 10, 1)), 10)).toHaveLength(10);
  });

  it.each([
    [{ counts: 'run-histories', unavailable: 0 } as const, ["executors' run histories", 'every run', 'in progress', '7 days'], ['unavailable', 'lower bound']],
    [{ counts: 'run-histories', unavailable: 2 } as const, ["executors' run histories", 'The 2 executors listed in unavailable', 'not counted'], ['lower bound']],
    [{ counts: 'shard-nodes', why: 'no-cluster-token' } as const, ['ORRERY_CLUSTER_TOKEN', 'shard nodes', 'lower bound'], ['summed']],
    [{ counts: 'shard-nodes', why: 'no-executor-answered' } as const, ['No executor', 'listed in unavailable', 'shard nodes', 'lower bound'], ['ORRERY_CLUSTER_TOKEN']],
  ])('coverage of %j', (source, says, doesNotSay) => {
    const sentence = coverageSentence(source);
    for (const text of says) expect(sentence).toContain(text);
    for (const text of doesNotSay) expect(sentence).not.toContain(text);
  });
});

const zkConnect = inject('zkConnect');
let c: ClusterTestConsole;
const presences: Array<{ close(): Promise<void> }> = [];
beforeAll(async () => {
  c = await startClusterConsole(zkConnect, 'console-stats', [statsRoutes], { now: () => NOW });
});
afterAll(async () => {
  await Promise.all(presences.splice(0).map((p) => p.close()));
  await c.close();
});

describe('GET /namespaces/:namespace/stats', () => {
  it('answers jobs and executors by state, runs and failures per job, the most failing first', async () => {
    presences.push(await startPresence(zkConnect, c.root, 'e1'));
    await c.zk.mkdirp('/namespaces/shop/executors/gone');
    await writeJob(c.zk, { name: 'ok', shardingTotalCount: 2, enabled: true });
    await writeJob(c.zk, { name: 'bad', shardingTotalCount: 3, enabled: true });
    await writeJob(c.zk, { name: 'worse', shardingTotalCount: 3, enabled: true });
    await writeJob(c.zk, { name: 'off', enabled: false });
    await writeAssignment(c.zk, 'ok', { e1: [0, 1] });
    await writeShard(c.zk, 'ok', 0, idle('succeeded'));
    await writeShard(c.zk, 'bad', 0, idle('failed'));
    await writeShard(c.zk, 'bad', 1, idle('succeeded'));
    for (const item of [0, 1, 2]) await writeShard(c.zk, 'worse', item, idle('timed-out', NOW - 1000 * (item + 1)));
    await eventually(async () => {
      const res = await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/stats' });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.jobs).toEqual({ total: 4, byState: { broken: 0, disabled: 1, unassigned: 0, failing: 2, running: 0, healthy: 1 } });
      expect(body.executors).toEqual({ total: 2, byState: { online: 1, drained: 0, offline: 1 } });
      expect(body.runs).toEqual([
        { job: 'bad', runs: 2, failures: 1, running: 0 },
        { job: 'off', runs: 0, failures: 0, running: 0 },
        { job: 'ok', runs: 1, failures: 0, running: 0 },
        { job: 'worse', runs: 3, failures: 3, running: 0 },
      ]);
      expect(body.mostFailing.map((j: { job: string }) => j.job)).toEqual(['worse', 'bad']);
      // No cluster token: the shard-node lower bound, and the answer says why.
      expect(body.source).toBe('shard-nodes');
      expect(body.unavailable).toEqual([]);
      expect(body.coverage).toContain("executors' run histories");
      expect(body.coverage).toContain('ORRERY_CLUSTER_TOKEN');
    });
    expect((await c.as('eve', { method: 'GET', url: '/api/v1/namespaces/shop/stats' })).statusCode).toBe(403);
    expect((await c.as('root', { method: 'GET', url: '/api/v1/namespaces/none/stats' })).statusCode).toBe(404);
  });
});

const TOKEN = 'stats-test-cluster-token';

describe("GET /namespaces/:namespace/stats from the executors' run histories (real executors)", () => {
  let d: ClusterTestConsole;
  const executors: Executor[] = [];
  let liar: Server | undefined;

  /** A real executor of namespace `shop` in this process, its history API on a free port of 127.0.0.1. */
  async function startExecutor(name: string): Promise<Executor> {
    const executor = createExecutor({
      connect: zkConnect, root: d.root, namespace: 'shop', name, sessionTimeoutMs: 6000,
      dataDir: mkdtempSync(join(tmpdir(), `stats-${name}-`)), httpPort: 0, advertiseHost: '127.0.0.1', clusterToken: TOKEN,
    });
    executors.push(executor);
    await executor.start();
    return executor;
  }

  /** What the allocator and the job leader would write: `executor` owns item 0 of each job. */
  async function assign(executor: Executor, jobs: string[]): Promise<void> {
    for (const job of jobs) {
      await writeAssignment(d.zk, job, { [executor.name]: [0] });
      await d.zk.create(paths.jobApplied('shop', job), encodeJson({ epoch: 1, allocatorEpoch: 1, items: { [executor.name]: [0] } }));
      await d.zk.mkdirp(paths.jobCommands('shop', job));
    }
    const owned = waitForEvent(executor, 'items:changed', { predicate: (e) => e.job === jobs.at(-1) && e.items.length === 1, timeoutMs: 30_000 });
    await d.zk.create(paths.executorAssignment('shop', executor.name), encodeJson({ allocatorEpoch: 1, jobs: Object.fromEntries(jobs.map((j) => [j, { epoch: 1, items: [0] }])) }));
    await owned;
  }

  /** Runs `job` now (as `orrery run` does) and waits for its run to finish; resolves its status. */
  async function runNow(executor: Executor, job: string): Promise<string> {
    const finished = waitForEvent(executor, 'run:finished', { predicate: (e) => e.job === job, timeoutMs: 30_000 });
    await d.zk.create(paths.jobCommand('shop', job, commandName.sequential()), encodeJson({ kind: 'run', requestedAt: Date.now() }), 'persistent-sequential');
    return (await finished).status;
  }

  const stats = async () => {
    const res = await d.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/stats' });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { runs: Array<{ job: string; runs: number; failures: number; running: number }>; mostFailing: Array<{ job: string; runs: number; failures: number; lastFailureAt: number | null }>; source: string; unavailable: Array<{ executor: string; reason: string; message: string }>; coverage: string };
  };

  beforeAll(async () => {
    d = await startClusterConsole(zkConnect, 'console-stats-histories', [statsRoutes]);
    d.ctx.clusterToken = TOKEN; // the console's cluster token (read at each request)
  });
  afterAll(async () => {
    await Promise.all(executors.map((e) => e.close()));
    await new Promise((resolve) => (liar ? liar.close(resolve) : resolve(undefined)));
    await d.close();
  });

  it('counts every run of the window, names an executor that is down or lies, and falls back to the shard nodes when none answers', async () => {
    await writeJob(d.zk, { name: 'thrice', command: 'echo run', enabled: true });
    await writeJob(d.zk, { name: 'fails', command: 'echo broken >&2; exit 3', enabled: true });
    await writeJob(d.zk, { name: 'elsewhere', command: 'true', enabled: true });
    const a = await startExecutor('exec-a');
    const b = await startExecutor('exec-b');
    await assign(a, ['thrice', 'fails']);
    await assign(b, ['elsewhere']);

    // The executor's own endpoint, over a real socket: the token first, then the query.
    const base = `http://127.0.0.1:${a.httpPort}`;
    expect((await fetch(`${base}/runs/summary?since=0`)).status).toBe(401);
    expect((await fetch(`${base}/runs/summary?since=0`, { headers: { authorization: 'Bearer not-the-token' } })).status).toBe(401);
    const badSince = await fetch(`${base}/runs/summary?since=-5`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect([badSince.status, ((await badSince.json()) as { details: { issues: Array<{ field: string }> } }).details.issues[0]!.field]).toEqual([400, 'since']);

    // One item, run three times: ZooKeeper keeps its last outcome only; the history has all three.
    for (let i = 0; i < 3; i += 1) expect(await runNow(a, 'thrice')).toBe('succeeded');
    for (let i = 0; i < 2; i += 1) expect(await runNow(a, 'fails')).toBe('failed');
    expect(await runNow(b, 'elsewhere')).toBe('succeeded');
    const summary = await fetch(`${base}/runs/summary?since=${Date.now() - STATS_WINDOW_MS}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect((await summary.json() as { jobs: unknown[] }).jobs).toEqual([
      { job: 'fails', runs: 2, failures: 2, timedOut: 0, lastFailureAt: expect.any(Number) },
      { job: 'thrice', runs: 3, failures: 0, timedOut: 0, lastFailureAt: null },
    ]);

    await eventually(async () => {
      const body = await stats();
      expect(body.source).toBe('run-histories');
      expect(body.unavailable).toEqual([]);
      expect(body.runs).toEqual([
        { job: 'elsewhere', runs: 1, failures: 0, running: 0 },
        { job: 'fails', runs: 2, failures: 2, running: 0 },
        { job: 'thrice', runs: 3, failures: 0, running: 0 },
      ]);
      expect(body.mostFailing).toEqual([{ job: 'fails', runs: 2, failures: 2, lastFailureAt: expect.any(Number) }]);
      expect(body.coverage).toContain("Counted from the executors' run histories");
    });

    // An executor whose summary is impossible (more failures than runs): named, not added.
    liar = createServer((req, res) => {
      const since = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('since'));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ since, jobs: [{ job: 'thrice', runs: 1, failures: 50, timedOut: 0, lastFailureAt: 1 }] }));
    });
    await new Promise<void>((resolve) => liar!.listen(0, '127.0.0.1', resolve));
    await d.zk.mkdirp(paths.executor('shop', 'liar'));
    await d.zk.create(paths.executorPresence('shop', 'liar'), encodeJson({ host: '127.0.0.1', pid: 1, version: 'test', startedAt: 1, handlers: [], tags: [], httpUrl: `http://127.0.0.1:${(liar.address() as AddressInfo).port}` }), 'ephemeral');
    // exec-b goes down: its presence goes with it, its history is out of reach.
    await b.close();
    await eventually(async () => {
      const body = await stats();
      expect(body.source).toBe('run-histories');
      expect(body.unavailable.map((u) => [u.executor, u.reason])).toEqual([['exec-b', 'offline'], ['liar', 'bad-answer']]);
      expect(body.unavailable[1]!.message).toContain('impossible counts');
      expect(body.runs).toEqual([
        // Its executor is down: not 0, the shard nodes' lower bound (its one item's last run).
        { job: 'elsewhere', runs: 1, failures: 0, running: 0 },
        { job: 'fails', runs: 2, failures: 2, running: 0 },
        { job: 'thrice', runs: 3, failures: 0, running: 0 },
      ]);
      expect(body.coverage).toContain('The 2 executors listed in unavailable could not be asked');
    });

    // Nobody answers: the shard nodes' lower bound (one run per item), and the answer says so.
    await a.close();
    await eventually(async () => {
      const body = await stats();
      expect(body.source).toBe('shard-nodes');
      expect(body.unavailable.map((u) => [u.executor, u.reason])).toEqual([['exec-a', 'offline'], ['exec-b', 'offline'], ['liar', 'bad-answer']]);
      expect(body.runs).toEqual([
        { job: 'elsewhere', runs: 1, failures: 0, running: 0 },
        { job: 'fails', runs: 1, failures: 1, running: 0 },
        { job: 'thrice', runs: 1, failures: 0, running: 0 },
      ]);
      expect(body.coverage).toContain('No executor');
      expect(body.coverage).toContain('lower bound');
    });
  }, 120_000);
});
