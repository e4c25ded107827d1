// The chaos suite: real ZooKeeper, real orrery-sharding and orrery-executor processes, real shell
// jobs writing a run ledger; faults by kill -9, SIGSTOP, a black-holing TCP proxy, and ZooKeeper
// servers killed and restarted. Every scenario ends with the ledger checker (run-ledger.ts): no two
// runs of a shard overlap, no fire runs twice except a declared failover re-run, tokens grow, and
// no fire is missed outside the fault window. Executors run with a 3 s session timeout.
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { paths, readShard } from '@orrery/core';
import { createTcpProxy, eventually, type TcpProxy } from '@orrery/core/testing';
import { readLedger } from '../src/run-ledger.js';
import { stopAllProcesses } from '../src/index.js';
import { NS, startCluster, type Cluster } from './executor-support.js';
import { assertLedger, everySecond, ledgerJob, startWebhookReceiver, waitRunning, type WebhookReceiver } from './chaos-support.js';

const zkConnect = inject('zkConnect');
const SESSION_MS = 3000;

let cluster: Cluster | undefined;
let hook: WebhookReceiver | undefined;
let proxy: TcpProxy | undefined;
afterEach(async () => {
  await cluster?.close();
  await stopAllProcesses();
  await proxy?.close();
  await hook?.close();
  cluster = undefined;
  hook = undefined;
  proxy = undefined;
});

const waitUntil = (t: number) => eventually(() => expect(Date.now()).toBeGreaterThanOrEqual(t), { timeoutMs: Math.max(1000, t - Date.now() + 2000), intervalMs: 20 });

describe('chaos', () => {
  it('kill -9 of an executor mid-run: the fire is re-run on a survivor at once, nothing overlaps, and the webhook hears of it', async () => {
    hook = await startWebhookReceiver();
    const c = (cluster = await startCluster('chaos-kill', zkConnect, { alarm: { webhook: hook.url, silenceSeconds: 300 } }));
    const ledger = join(c.dir, 'ledger.txt');
    for (const e of ['e1', 'e2', 'e3']) await c.startExecutor(e);
    await c.startAllocator();
    await c.waitMembers(3);
    await c.apply(ledgerJob('chaos', ledger, { seconds: 0.6 }));
    await c.waitApplied('chaos');
    const t0 = Date.now();
    await waitUntil(t0 + 3000);
    const victim = (await c.assignment('chaos'))!.items['e2'] ? 'e2' : 'e1';
    const run = await waitRunning(ledger, victim);
    const killedAt = Date.now();
    c.executors.get(victim)!.kill('SIGKILL');
    let rerunAt = 0;
    await eventually(() => {
      const rerun = readLedger(ledger).runs.find((r) => r.trigger === 'failover' && r.item === run.item && r.fireTime === run.fireTime);
      expect(rerun).toBeDefined();
      rerunAt = rerun!.start;
    }, { timeoutMs: SESSION_MS + 8000, intervalMs: 20 });
    await waitUntil(rerunAt + 3000);
    const t1 = Date.now();
    await c.close();
    cluster = undefined;
    const report = assertLedger(ledger, [{ job: 'chaos', items: 3, fireTimes: everySecond(t0 + 1000, t1 - 1500) }], [[killedAt - 1000, rerunAt + 1500]], 'kill -9 of an executor mid-run');
    expect(report.failoverReruns).toBeGreaterThanOrEqual(1);
    const killed = readLedger(ledger).runs.find((r) => r.runId === run.runId)!;
    // Its fence guard killed the orphaned run as soon as the executor died.
    expect(killed.ended).toBe(false);
    expect(killed.lastSeen - killedAt).toBeLessThan(500);
    // Detection (session expiry) + reassignment + start: within the session timeout + 2 s here.
    expect(rerunAt - killedAt).toBeLessThan(SESSION_MS + 2000);
    await eventually(() => {
      expect(hook!.bodies).toContainEqual(expect.objectContaining({ kind: 'executor-lost', namespace: NS, executor: victim }));
      expect(hook!.bodies).toContainEqual(expect.objectContaining({ kind: 'failover', namespace: NS, job: 'chaos', item: run.item, crashedExecutor: victim }));
    });
  });

  it('an executor black-holed past its session timeout stops its shard before another executor re-runs it', async () => {
    const c = (cluster = await startCluster('chaos-blackhole', zkConnect));
    const ledger = join(c.dir, 'ledger.txt');
    const [host, port] = zkConnect.split(':');
    proxy = await createTcpProxy({ targetHost: host, targetPort: Number(port) });
    await c.startExecutor('cut', ['--zk', proxy.connectString]);
    await c.startExecutor('ok');
    await c.startAllocator();
    await c.waitMembers(2);
    // Long runs (8 s) every 10 s: the cut comes while one runs.
    await c.apply(ledgerJob('long', ledger, { cron: '*/10 * * * * *', shardingTotalCount: 2, seconds: 8 }));
    await c.waitApplied('long');
    const run = await waitRunning(ledger, 'cut', 25_000);
    const cutAt = Date.now();
    proxy.blackhole();
    let rerunAt = 0;
    await eventually(() => {
      const rerun = readLedger(ledger).runs.find((r) => r.trigger === 'failover' && r.item === run.item && r.fireTime === run.fireTime);
      expect(rerun).toBeDefined();
      expect(rerun!.executor).toBe('ok');
      rerunAt = rerun!.start;
    }, { timeoutMs: SESSION_MS + 10_000, intervalMs: 20 });
    const fenced = readLedger(ledger).runs.find((r) => r.runId === run.runId)!;
    // Fenced before the session could expire: dead well within the session timeout of the cut.
    expect(fenced.ended).toBe(false);
    expect(fenced.lastSeen - cutAt).toBeLessThan(SESSION_MS);
    // While cut off, it started nothing.
    expect(readLedger(ledger).runs.filter((r) => r.executor === 'cut' && r.start > cutAt)).toEqual([]);
    // The link comes back: it joins again with a new session, without a restart.
    proxy.forward();
    await eventually(async () => {
      const stat = await c.zk.exists(paths.executorPresence(NS, 'cut'));
      expect(stat).not.toBeNull();
    }, { timeoutMs: 15_000 });
    await waitUntil(rerunAt + 9000);
    await c.close();
    cluster = undefined;
    assertLedger(ledger, [], [], 'black hole past the session timeout');
  });

  it('SIGSTOP of an executor past its session timeout, then SIGCONT: its run is killed, records nothing, and the fire is re-run elsewhere', async () => {
    const c = (cluster = await startCluster('chaos-sigstop', zkConnect));
    const ledger = join(c.dir, 'ledger.txt');
    const frozen = await c.startExecutor('frozen');
    await c.startExecutor('other');
    await c.startAllocator();
    await c.waitMembers(2);
    await c.apply(ledgerJob('paused', ledger, { cron: '*/10 * * * * *', shardingTotalCount: 2, seconds: 8 }));
    await c.waitApplied('paused');
    const run = await waitRunning(ledger, 'frozen', 25_000);
    const stoppedAt = Date.now();
    frozen.kill('SIGSTOP');
    let rerunAt = 0;
    await eventually(() => {
      const rerun = readLedger(ledger).runs.find((r) => r.trigger === 'failover' && r.item === run.item && r.fireTime === run.fireTime);
      expect(rerun).toBeDefined();
      rerunAt = rerun!.start;
    }, { timeoutMs: SESSION_MS + 10_000, intervalMs: 20 });
    // The frozen executor's guard killed the run at the fence deadline, before the session expired.
    const killed = readLedger(ledger).runs.find((r) => r.runId === run.runId)!;
    expect(killed.ended).toBe(false);
    expect(killed.lastSeen).toBeLessThan(rerunAt);
    expect(killed.lastSeen - stoppedAt).toBeLessThan(SESSION_MS);
    frozen.kill('SIGCONT');
    // Back: it finds its session expired and joins again; the stale run recorded nothing.
    await frozen.waitForLine(/"state":"LOST"/, 15_000);
    await eventually(async () => expect(await c.zk.exists(paths.executorPresence(NS, 'frozen'))).not.toBeNull(), { timeoutMs: 15_000 }).catch(async (e) => {
      // Show what the executor said last: a failed rejoin is easiest read there.
      await frozen.waitForLine(/^$a/, 10).catch((x: unknown) => console.log(String(x)));
      throw e;
    });
    await eventually(async () => {
      const shard = await readShard(c.zk, paths.jobShard(NS, 'paused', run.item));
      expect(shard?.state.last?.runId).not.toBe(run.runId);
      if (shard?.state.state === 'idle' && shard.state.last?.fireTime === run.fireTime) expect(shard.state.last.attempt).toBe(2);
    });
    await waitUntil(rerunAt + 9000);
    await c.close();
    cluster = undefined;
    assertLedger(ledger, [], [], 'SIGSTOP past the session timeout, then SIGCONT');
  });
});
