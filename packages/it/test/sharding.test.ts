// orrery-sharding against a real ZooKeeper, as real processes; executors are simulated by their
// presence nodes (the real executor comes with its own issue).
import { createServer } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  checkAssignment,
  checkExecutorAssignment,
  checkShardingState,
  claimShard,
  completeShard,
  createMetrics,
  createZkClient,
  encodeJson,
  parseJobConfig,
  paths,
  readJson,
  readMetric,
  silentLogger,
  type Assignment,
  type JobConfigInput,
  type ZkClient,
} from '@orrery/core';
import { createTcpProxy, eventually, forceExpireSession, freePort, uniqueRoot, type TcpProxy } from '@orrery/core/testing';
import { createNamespace, runCli } from '@orrery/console';
import { createAllocator } from '@orrery/sharding';
import { startProcess, startSimulatedExecutor, stopAllProcesses, type RunningProcess, type SimulatedExecutor } from '../src/index.js';

const zkConnect = inject('zkConnect');
const NS = 'shop';
const sims: SimulatedExecutor[] = [];
const admins: ZkClient[] = [];
let proxy: TcpProxy;

beforeAll(async () => {
  proxy = await createTcpProxy({ targetPort: Number(zkConnect.split(':')[1]) });
});
afterEach(async () => {
  await stopAllProcesses();
  await Promise.all(sims.splice(0).map((s) => s.close()));
  await Promise.all(admins.splice(0).map((a) => a.close()));
});
afterAll(async () => {
  await proxy.close();
});

async function setup(label: string, jobs: JobConfigInput[], settings: Record<string, unknown> = {}): Promise<{ root: string; zk: ZkClient }> {
  const root = uniqueRoot(label);
  const zk = createZkClient({ connect: zkConnect, root });
  admins.push(zk);
  await zk.start();
  await createNamespace(zk, NS, settings);
  for (const job of jobs) await zk.create(paths.job(NS, job.name), encodeJson(parseJobConfig(job)));
  return { root, zk };
}

async function executor(root: string, name: string, extra: { handlers?: string[]; tags?: string[]; viaProxy?: boolean } = {}): Promise<SimulatedExecutor> {
  const sim = await startSimulatedExecutor({ connect: extra.viaProxy ? proxy.connectString : zkConnect, root, namespace: NS, name, handlers: extra.handlers ?? [], tags: extra.tags ?? [], sessionTimeoutMs: 3000 });
  sims.push(sim);
  return sim;
}

async function allocator(root: string, extra: string[] = [], options: { viaProxy?: boolean } = {}): Promise<RunningProcess & { port: number }> {
  const port = await freePort();
  const p = startProcess('orrery-sharding', ['--zk', options.viaProxy ? proxy.connectString : zkConnect, '--root', root, '--http-port', String(port), '--http-host', '127.0.0.1', '--session-timeout', '2', '--debounce-ms', '100', ...extra]);
  await p.waitForLine(/"allocator started"/);
  return Object.assign(p, { port });
}

async function health(port: number): Promise<{ ok: boolean; leader: boolean }> {
  return (await fetch(`http://127.0.0.1:${port}/healthz`)).json() as Promise<{ ok: boolean; leader: boolean }>;
}
async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return readMetric(text, name, { namespace: NS }) ?? 0;
}

async function assignments(zk: ZkClient, jobs: string[]): Promise<Map<string, { value: Assignment; mzxid: number }>> {
  const out = new Map<string, { value: Assignment; mzxid: number }>();
  for (const job of jobs) {
    const read = await readJson(zk, paths.jobAssignment(NS, job), checkAssignment);
    if (read) out.set(job, { value: read.value, mzxid: read.stat.mzxid });
  }
  return out;
}

/** (job#item) → executor, over the given jobs. */
async function owners(zk: ZkClient, jobs: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [job, { value }] of await assignments(zk, jobs)) {
    for (const [e, items] of Object.entries(value.items)) for (const i of items) out.set(`${job}#${i}`, e);
  }
  return out;
}

const shell = (name: string, shardingTotalCount: number, extra: Partial<JobConfigInput> = {}): JobConfigInput => ({ name, type: 'shell', command: 'true', cron: '* * * * * *', shardingTotalCount, enabled: true, ...extra });

describe('orrery-sharding', () => {
  it('assigns every shard, writes executor summaries, and explains unassigned shards', async () => {
    const { root, zk } = await setup('alloc-basic', [shell('a', 6), shell('b', 3, { loadLevel: 2 }), { name: 'n', type: 'node', handler: 'nobody', enabled: true, shardingTotalCount: 2 }]);
    await executor(root, 'e1');
    await executor(root, 'e2');
    await executor(root, 'e3');
    const p = await allocator(root);
    await eventually(async () => {
      const got = await assignments(zk, ['a', 'b', 'n']);
      expect(Object.values(got.get('a')!.value.items).flat().sort()).toEqual([0, 1, 2, 3, 4, 5]);
      expect(Object.values(got.get('b')!.value.items).flat().sort()).toEqual([0, 1, 2]);
      expect(got.get('n')!.value.unassigned).toEqual([{ item: 0, reason: 'no-executor-has-handler' }, { item: 1, reason: 'no-executor-has-handler' }]);
    });
    // Summaries agree with the job assignments.
    const a = (await assignments(zk, ['a'])).get('a')!.value;
    for (const e of ['e1', 'e2', 'e3']) {
      const summary = await readJson(zk, paths.executorAssignment(NS, e), checkExecutorAssignment);
      expect(summary!.value.allocatorEpoch).toBe(a.allocatorEpoch);
      expect(summary!.value.jobs.a?.items ?? []).toEqual(a.items[e] ?? []);
    }
    // Loads: 6×1 + 3×2 = 12 over 3 executors: 4 each.
    const load = new Map<string, number>();
    for (const [job, { value }] of await assignments(zk, ['a', 'b'])) {
      for (const [e, items] of Object.entries(value.items)) load.set(e, (load.get(e) ?? 0) + items.length * (job === 'b' ? 2 : 1));
    }
    expect([...load.values()]).toEqual([4, 4, 4]);
    let out = '';
    await runCli(['--zk', zkConnect, '--root', root, '-n', NS, 'get', 'assignment'], { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => true }, env: {} });
    expect(out).toMatch(/n\s+1\s+-\s+0 \(no-executor-has-handler\), 1 \(no-executor-has-handler\)/);
    // Once allocated, a failover round is computed ahead of need, once, and nothing is written for it.
    const written = async () => [(await readJson(zk, paths.namespaceSharding(NS), checkShardingState))!.stat.mzxid, ...[...(await assignments(zk, ['a', 'b', 'n'])).values()].map((x) => x.mzxid)];
    const before = await written();
    await p.waitForLine(/computed a failover round ahead of need/);
    await new Promise((r) => setTimeout(r, 300)); // (what a write would take to land)
    expect(await written()).toEqual(before);
    expect(p.lines.filter((l) => l.includes('computed a failover round ahead of need'))).toHaveLength(1);
  });

  it('follows namespaces and jobs created and deleted while it runs', async () => {
    const root = uniqueRoot('alloc-live');
    const zk = createZkClient({ connect: zkConnect, root });
    admins.push(zk);
    await zk.start();
    await allocator(root);
    await createNamespace(zk, NS);
    await executor(root, 'e1');
    await zk.create(paths.job(NS, 'late'), encodeJson(parseJobConfig(shell('late', 2))));
    await eventually(async () => expect((await assignments(zk, ['late'])).get('late')?.value.items).toEqual({ e1: [0, 1] }));
    await eventually(async () => expect((await readJson(zk, paths.executorAssignment(NS, 'e1'), checkExecutorAssignment))?.value.jobs).toEqual({ late: { epoch: 1, items: [0, 1] } }));
    await zk.deleteRecursive(paths.job(NS, 'late'));
    await eventually(async () => expect((await readJson(zk, paths.executorAssignment(NS, 'e1'), checkExecutorAssignment))?.value.jobs).toEqual({}));
  });

  it('hands over on kill -9 of the leader: the standby writes nothing when nothing changed, then reacts to the next change', async () => {
    const { root, zk } = await setup('alloc-ha', [shell('a', 8), shell('b', 4)]);
    for (const e of ['e1', 'e2', 'e3']) await executor(root, e);
    const first = await allocator(root);
    await eventually(async () => expect((await health(first.port)).leader).toBe(true));
    const standby = await allocator(root);
    expect((await health(standby.port)).leader).toBe(false);
    await eventually(async () => expect((await assignments(zk, ['a', 'b'])).size).toBe(2));
    // Let the first round settle, then take a snapshot of every node the allocator writes.
    await eventually(async () => expect((await readJson(zk, paths.namespaceSharding(NS), checkShardingState))?.value.members).toEqual(['e1', 'e2', 'e3']));
    const snapshot = async (): Promise<string[]> => {
      const out: string[] = [];
      for (const [job, { mzxid }] of await assignments(zk, ['a', 'b'])) out.push(`${job}@${mzxid}`);
      for (const e of ['e1', 'e2', 'e3']) out.push(`${e}@${(await zk.exists(paths.executorAssignment(NS, e)))?.mzxid}`);
      out.push(`sharding@${(await zk.exists(paths.namespaceSharding(NS)))?.mzxid}`);
      return out;
    };
    const before = await snapshot();
    const oldEpoch = (await assignments(zk, ['a'])).get('a')!.value.allocatorEpoch;

    first.kill('SIGKILL');
    await first.exited;
    await eventually(async () => expect((await health(standby.port)).leader).toBe(true), { timeoutMs: 20_000 });
    // The new leader ran a round for the namespace, starting from what was written: nothing moved.
    await eventually(async () => expect(await metric(standby.port, 'orrery_sharding_rounds_total')).toBeGreaterThanOrEqual(1));
    expect(await snapshot()).toEqual(before);
    expect(await metric(standby.port, 'orrery_sharding_job_assignments_written_total')).toBe(0);

    // The next change: a fourth executor joins, and only the new leader's epoch is written.
    await executor(root, 'e4');
    await eventually(async () => {
      const a = await assignments(zk, ['a', 'b']);
      const onE4 = [...a.values()].flatMap(({ value }) => value.items.e4 ?? []);
      expect(onE4.length).toBe(3);
      for (const { value } of a.values()) expect(value.allocatorEpoch).toBeGreaterThan(oldEpoch);
    });
  });

  it('survives the expiry of its own session: steps down, keeps running, and leads again under a new epoch', async () => {
    const { root, zk } = await setup('alloc-own-expiry', [shell('a', 6)]);
    for (const e of ['e1', 'e2']) await executor(root, e);
    // Through the proxy, with a 2 s session: cut off past it, the server expires the session.
    const p = await allocator(root, [], { viaProxy: true });
    const { port } = p;
    let exited = false;
    void p.exited.then(() => { exited = true; });
    await eventually(async () => expect((await health(port)).leader).toBe(true), { timeoutMs: 20_000 });
    await eventually(async () => expect((await assignments(zk, ['a'])).size).toBe(1));
    const oldEpoch = (await assignments(zk, ['a'])).get('a')!.value.allocatorEpoch;
    proxy.blackhole();
    try {
      // Its latch node is ephemeral: gone once the server has expired the session.
      await eventually(async () => expect(await zk.getChildren(paths.shardingLeader())).toEqual([]), { timeoutMs: 20_000 });
    } finally {
      proxy.reset();
      proxy.forward();
    }
    await eventually(() => expect(p.lines.some((l) => l.includes('"state":"LOST"'))).toBe(true), { timeoutMs: 20_000 });
    await eventually(async () => expect((await health(port)).leader).toBe(true), { timeoutMs: 20_000 });
    expect(exited).toBe(false);
    // The next change is allocated, under the new epoch.
    await executor(root, 'e3');
    await eventually(async () => {
      const { value } = (await assignments(zk, ['a'])).get('a')!;
      expect(value.items.e3?.length).toBe(2);
      expect(value.allocatorEpoch).toBeGreaterThan(oldEpoch);
    }, { timeoutMs: 20_000 });
  });

  it('moves exactly the shards of an executor whose session expired', async () => {
    const { root, zk } = await setup('alloc-expiry', [shell('a', 12), shell('b', 8)]);
    for (const e of ['e1', 'e2', 'e3']) await executor(root, e);
    const victim = await executor(root, 'e4', { viaProxy: true });
    await allocator(root);
    await eventually(async () => expect((await readJson(zk, paths.namespaceSharding(NS), checkShardingState))?.value.members).toEqual(['e1', 'e2', 'e3', 'e4']));
    const before = await owners(zk, ['a', 'b']);
    expect([...before.values()].filter((e) => e === 'e4').length).toBe(5);
    const summaries = async (names: string[]) => Promise.all(names.map(async (e) => (await readJson(zk, paths.executorAssignment(NS, e), checkExecutorAssignment))!));
    // The first round (everyone joined): the assignments first, then the summaries.
    const firstAssigned = Math.max(...[...(await assignments(zk, ['a', 'b'])).values()].map((a) => a.mzxid));
    for (const summary of await summaries(['e1', 'e2', 'e3', 'e4'])) expect(summary.stat.mzxid).toBeGreaterThan(firstAssigned);

    await forceExpireSession(victim.zk, proxy, zkConnect);
    await eventually(async () => expect([...(await owners(zk, ['a', 'b'])).values()]).not.toContain('e4'), { timeoutMs: 20_000 });
    const after = await owners(zk, ['a', 'b']);
    for (const [shard, e] of before) {
      if (e === 'e4') expect(after.get(shard)).not.toBe('e4');
      else expect(after.get(shard), shard).toBe(e);
    }
    expect(after.size).toBe(20);
    // A round in which an executor only left: the gainers' summaries first (a job whose every
    // holder died needs a survivor's runtime to apply its assignment), naming the epochs then written.
    const moved = await assignments(zk, ['a', 'b']);
    const gainers = [...new Set([...before].filter(([, e]) => e === 'e4').map(([shard]) => after.get(shard)!))];
    for (const [i, summary] of (await summaries(gainers)).entries()) {
      for (const [job, { value, mzxid }] of moved) {
        if (!summary.value.jobs[job]) continue;
        expect(summary.stat.mzxid, `${gainers[i]}'s summary before ${job}'s assignment`).toBeLessThan(mzxid);
        expect(summary.value.jobs[job]).toEqual({ epoch: value.epoch, items: value.items[gainers[i]!] });
      }
    }
  });

  it('runs the round for an executor\'s loss after a short quiet, not the debounce', async () => {
    const { root, zk } = await setup('alloc-loss-quiet', [shell('a', 6)]);
    for (const e of ['e1', 'e2']) await executor(root, e);
    const victim = await executor(root, 'e3', { viaProxy: true });
    const port = await freePort();
    // A debounce of 3 s: every other round waits for it, up to the 1 s cap on a burst; the loss's must not.
    const p = startProcess('orrery-sharding', ['--zk', zkConnect, '--root', root, '--http-port', String(port), '--http-host', '127.0.0.1', '--session-timeout', '2', '--debounce-ms', '3000']);
    await p.waitForLine(/"allocator started"/);
    await eventually(async () => expect((await readJson(zk, paths.namespaceSharding(NS), checkShardingState))?.value.members).toEqual(['e1', 'e2', 'e3']), { timeoutMs: 20_000 });
    await forceExpireSession(victim.zk, proxy, zkConnect);
    const round = await eventually(() => {
      const line = p.lines.find((l) => l.includes('"msg":"allocation written"') && l.includes('"members":2'));
      if (!line) throw new Error('no round without e3 yet');
      return JSON.parse(line) as { steps: { waitMs: number }; gcMs: number };
    }, { timeoutMs: 20_000 });
    // The round's share of the process's garbage-collection pauses, logged with its steps.
    expect(Number.isInteger(round.gcMs) && round.gcMs >= 0).toBe(true);
    expect(p.lines.some((l) => l.includes('"msg":"executor lost (') && l.includes('"executor":"e3"'))).toBe(true);
    // From the loss to the round's start: the 25 ms quiet (and the machine's scheduling), not the
    // 1,000 ms a debounced burst waits here.
    expect(round.steps.waitMs).toBeLessThan(600);
    expect([...(await owners(zk, ['a'])).values()]).not.toContain('e3');
  });

  it('coalesces a burst of 20 joins into a handful of rounds', async () => {
    const { root, zk } = await setup('alloc-burst', [shell('a', 44), shell('b', 22)]);
    await executor(root, 'e00');
    await executor(root, 'e01');
    const p = await allocator(root);
    await eventually(async () => expect((await readJson(zk, paths.namespaceSharding(NS), checkShardingState))?.value.members).toHaveLength(2));
    const roundsBefore = await metric(p.port, 'orrery_sharding_rounds_total');
    await Promise.all(Array.from({ length: 20 }, (_, i) => executor(root, `j${String(i).padStart(2, '0')}`)));
    await eventually(async () => expect((await readJson(zk, paths.namespaceSharding(NS), checkShardingState))?.value.members).toHaveLength(22), { timeoutMs: 15_000 });
    const rounds = (await metric(p.port, 'orrery_sharding_rounds_total')) - roundsBefore;
    expect(rounds).toBeGreaterThanOrEqual(1);
    expect(rounds).toBeLessThanOrEqual(4);
    // Rounds that wrote are timed (a histogram), and so are the allocator's ZooKeeper operations.
    expect(await metric(p.port, 'orrery_sharding_round_seconds_count')).toBeGreaterThanOrEqual(2);
    const text = await (await fetch(`http://127.0.0.1:${p.port}/metrics`)).text();
    expect(readMetric(text, 'orrery_zookeeper_operation_seconds_count', { operation: 'set' })).toBeGreaterThanOrEqual(1);
    expect(readMetric(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    // And the result is balanced: 66 shards over 22 executors, 3 each.
    const load = new Map<string, number>();
    for (const e of (await owners(zk, ['a', 'b'])).values()) load.set(e, (load.get(e) ?? 0) + 1);
    expect(new Set(load.values())).toEqual(new Set([3]));
  });

  it('drains and undrains through the CLI, and reshards on request', async () => {
    const { root, zk } = await setup('alloc-drain', [shell('a', 6)]);
    for (const e of ['e1', 'e2']) await executor(root, e);
    await allocator(root);
    await eventually(async () => expect(Object.keys((await assignments(zk, ['a'])).get('a')?.value.items ?? {})).toEqual(['e1', 'e2']));
    const cli = (...args: string[]) => runCli(['--zk', zkConnect, '--root', root, '-n', NS, ...args], { stdout: { write: () => true }, stderr: { write: () => true }, env: {} });
    expect(await cli('drain', 'e2')).toBe(0);
    await eventually(async () => expect((await assignments(zk, ['a'])).get('a')!.value.items).toEqual({ e1: [0, 1, 2, 3, 4, 5] }));
    expect(await cli('undrain', 'e2')).toBe(0);
    await eventually(async () => expect((await assignments(zk, ['a'])).get('a')!.value.items.e2).toHaveLength(3));
    expect(await cli('drain', 'nobody')).toBe(1);
    // A skew written by hand (an operator's mistake) stays until a reshard is requested.
    const current = await zk.get(paths.jobAssignment(NS, 'a'));
    const skew = { ...JSON.parse(current.data!.toString()), items: { e1: [0, 1, 2, 3, 4, 5] } };
    await zk.set(paths.jobAssignment(NS, 'a'), encodeJson(skew), current.stat.version);
    expect(await cli('reshard', 'a')).toBe(0);
    await eventually(async () => expect((await assignments(zk, ['a'])).get('a')!.value.items.e2).toHaveLength(3));
    await eventually(async () => expect(await zk.getChildren(paths.shardingRequests())).toEqual([]));
  });

  it('re-reads only the named job\'s assignment for a job\'s reshard request, every job\'s for the namespace\'s, and retries a request whose round failed', async () => {
    // In-process, on a real ZooKeeper, with the allocator's reads counted: a job leader refuses an
    // assignment naming an executor that just died, so a failover brings a request per such job,
    // and re-reading the whole namespace for each cost seconds at 10,000 jobs.
    const jobs = [...Array.from({ length: 30 }, (_, i) => shell(`j${i}`, 2)), shell('s1', 1), shell('s2', 1)];
    const { root, zk } = await setup('alloc-reshard-reads', jobs);
    for (const e of ['e1', 'e2']) await executor(root, e);
    const client = createZkClient({ connect: zkConnect, root });
    admins.push(client);
    await client.start();
    const reads: string[] = [];
    /** A read of this path fails once (a connection lost mid-round), then the flag clears. */
    let failOnce: string | undefined;
    const counted = new Proxy(client, {
      get(target, key) {
        if (key === 'get') {
          return (path: string, ...rest: unknown[]) => {
            reads.push(path);
            if (path === failOnce) {
              failOnce = undefined;
              return Promise.reject(new Error('connection lost (injected)'));
            }
            return (target.get as (...a: unknown[]) => unknown)(path, ...rest);
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const alloc = createAllocator({ zk: counted, logger: silentLogger(), metrics: createMetrics(), debounceMs: 50 });
    try {
      await alloc.start();
      await eventually(async () => expect((await assignments(zk, jobs.map((j) => j.name))).size).toBe(32));
      // The first round is over once it wrote the namespace's members (its last write).
      await eventually(async () => expect((await readJson(zk, paths.namespaceSharding(NS), checkShardingState))?.value.members).toEqual(['e1', 'e2']));
      const assignmentReads = (): string[] => reads.filter((r) => /\/assignment$/.test(r) && r.includes('/jobs/'));
      // A skew written by hand to j7, then a reshard of j7 alone: j7 is read again, and re-planned.
      const current = await zk.get(paths.jobAssignment(NS, 'j7'));
      await zk.set(paths.jobAssignment(NS, 'j7'), encodeJson({ ...JSON.parse(current.data!.toString()), items: { e1: [0, 1] } }), current.stat.version);
      reads.length = 0;
      const cli = (...args: string[]) => runCli(['--zk', zkConnect, '--root', root, '-n', NS, ...args], { stdout: { write: () => true }, stderr: { write: () => true }, env: {} });
      expect(await cli('reshard', 'j7')).toBe(0);
      await eventually(async () => expect(Object.values((await assignments(zk, ['j7'])).get('j7')!.value.items).map((items) => items.length)).toEqual([1, 1]));
      expect(assignmentReads()).toEqual([paths.jobAssignment(NS, 'j7')]);
      // A namespace-wide request re-reads every job's.
      reads.length = 0;
      expect(await cli('reshard')).toBe(0);
      await eventually(() => expect(new Set(assignmentReads())).toEqual(new Set(jobs.map((j) => paths.jobAssignment(NS, j.name)))));
      await eventually(async () => expect(await zk.getChildren(paths.shardingRequests())).toEqual([]));
      // A round that fails after taking a request (its nodes deleted) still carries it out on the
      // retry. Both one-shard jobs put on e2 by hand (loads 30 / 32): sticky, they stay there until
      // a reshard of one of them moves it back.
      for (const job of ['s1', 's2']) {
        const node = await zk.get(paths.jobAssignment(NS, job));
        await zk.set(paths.jobAssignment(NS, job), encodeJson({ ...JSON.parse(node.data!.toString()), items: { e2: [0] } }), node.stat.version);
      }
      failOnce = paths.jobAssignment(NS, 's1');
      expect(await cli('reshard', 's1')).toBe(0);
      await eventually(async () => expect((await assignments(zk, ['s1'])).get('s1')!.value.items).toEqual({ e1: [0] }), { timeoutMs: 10_000 });
      expect(failOnce).toBeUndefined();
    } finally {
      await alloc.close();
    }
  });

  it('sends one unassigned-shards alarm per job per silence window to the namespace webhook, retrying a 5xx', async () => {
    const received: Array<Record<string, unknown>> = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push(JSON.parse(body) as Record<string, unknown>);
        // The first POST meets a webhook that is down for a moment: the sender retries it.
        res.statusCode = received.length === 1 ? 503 : 200;
        res.end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const { root } = await setup('alloc-alarm', [{ name: 'gpu-job', type: 'node', handler: 'render', enabled: true, shardingTotalCount: 2 }], {
        alarm: { webhook: `http://127.0.0.1:${port}/alarm`, silenceSeconds: 600 },
      });
      await executor(root, 'e1');
      const p = await allocator(root, ['--alarm-after', '1']);
      await eventually(() => expect(received).toHaveLength(2), { timeoutMs: 20_000 });
      expect(received[0]).toMatchObject({ kind: 'shards-unassigned', namespace: NS, job: 'gpu-job', items: [{ item: 0, reason: 'no-executor-has-handler' }, { item: 1, reason: 'no-executor-has-handler' }] });
      expect(received[1]).toEqual(received[0]); // the same alarm, retried
      await eventually(async () => expect(await metric(p.port, 'orrery_sharding_alarms_total')).toBe(1));
      // Absence over a window needs the window to pass: the allocator checks every second.
      await new Promise((r) => setTimeout(r, 3000));
      expect(received).toHaveLength(2);
      expect(await metric(p.port, 'orrery_sharding_alarms_total')).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('never lets an item run twice for one fire while shards move (claims settle it)', async () => {
    const { root, zk } = await setup('alloc-moves', [shell('a', 6)]);
    const names = ['e1', 'e2', 'e3'];
    for (const e of names) await executor(root, e);
    await allocator(root);
    await eventually(async () => expect((await assignments(zk, ['a'])).size).toBe(1));
    // Each stand-in executor fires every 200 ms the items its own summary gives it, and claims each
    // shard with the real claim protocol; runs last 120 ms. Meanwhile executors join and leave.
    const runs: string[] = [];
    let stop = false;
    const loops = new Map<string, Promise<void>>();
    const fireLoop = async (name: string, client: ZkClient): Promise<void> => {
      let lastFire = 0;
      while (!stop) {
        const fireTime = Math.floor(Date.now() / 200) * 200;
        if (fireTime > lastFire) {
          lastFire = fireTime;
          const summary = await readJson(client, paths.executorAssignment(NS, name), checkExecutorAssignment).catch(() => undefined);
          await Promise.all((summary?.value.jobs.a?.items ?? []).map(async (item) => {
            const path = paths.jobShard(NS, 'a', item);
            await client.mkdirp(paths.jobShards(NS, 'a'));
            const r = await claimShard(client, path, { executor: name, session: client.sessionId!, runId: `${name}-${fireTime}-${item}`, fireTime, startedAt: Date.now() });
            if (!r.claimed) return;
            runs.push(`${fireTime}#${item}`);
            await new Promise((res) => setTimeout(res, 120));
            await completeShard(client, r.claim, { status: 'succeeded', exitCode: 0, startedAt: fireTime, endedAt: Date.now(), durationMs: 120, executor: name, runId: r.claim.state.runId, fireTime, attempt: 1, fencingToken: r.claim.fencingToken, message: '', stdoutTail: '', stderrTail: '' });
          }));
        }
        await new Promise((res) => setTimeout(res, 20));
      }
    };
    for (const sim of sims) loops.set(sim.name, fireLoop(sim.name, sim.zk));
    const joiner = await executor(root, 'e4');
    loops.set('e4', fireLoop('e4', joiner.zk));
    await eventually(async () => expect(Object.keys((await assignments(zk, ['a'])).get('a')!.value.items)).toContain('e4'));
    await sims[0]!.leave();
    await eventually(async () => expect(Object.keys((await assignments(zk, ['a'])).get('a')!.value.items)).not.toContain('e1'));
    const joiner2 = await executor(root, 'e5');
    loops.set('e5', fireLoop('e5', joiner2.zk));
    await eventually(async () => expect(Object.keys((await assignments(zk, ['a'])).get('a')!.value.items)).toContain('e5'));
    await eventually(() => expect(runs.length).toBeGreaterThan(40));
    stop = true;
    await Promise.all(loops.values());
    expect(runs.length).toBeGreaterThan(20);
    const counts = new Map<string, number>();
    for (const r of runs) counts.set(r, (counts.get(r) ?? 0) + 1);
    expect([...counts.entries()].filter(([, n]) => n > 1)).toEqual([]);
  });
});
