// Executors on "other hosts": each in a network namespace of its own, reaching a 3-node ZooKeeper
// ensemble and being reached by the console only over a veth link (10.231.N.0/24), never loopback.
// Sharding, firing, run history through the console and failover work as on loopback; a cut link
// trips the cut-off executor's self-fence before another re-runs its shard — no overlap (the run
// ledger's oracle), no duplicate. Skipped, saying why, where network namespaces cannot be made.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '@orrery/core';
import { eventually, freePort, startEnsemble, type ZooKeeperEnsemble } from '@orrery/core/testing';
import { createNetNamespace, netnsUnavailable, startProcess, stopAllProcesses, type NetNamespace, type RunningProcess } from '../src/index.js';
import { assertLedger, ledgerJob, waitFailoverRerun, waitRunning } from './chaos-support.js';
import { JOBS_DIR, NS, TOKEN, startCluster, waitIdle, type Cluster } from './executor-support.js';
import { readLedger } from '../src/run-ledger.js';

const unavailable = netnsUnavailable();
if (unavailable) console.log(`[across-hosts] skipped: network namespaces cannot be made here (${unavailable}); this test needs root (or CAP_NET_ADMIN) and iproute2`);

const ADMIN_PASSWORD = 'across-hosts-admin';
let ensemble: ZooKeeperEnsemble | undefined;
let c: Cluster | undefined;
const hosts = new Map<string, NetNamespace>();
const executors = new Map<string, RunningProcess>();
let consoleUrl = '';
let cookie = '';

/** Starts executor `name` inside `host`, dialling the ensemble through its link. */
async function startRemoteExecutor(name: string, host: NetNamespace): Promise<RunningProcess> {
  const zk = ensemble!.servers.map((s) => `${host.gateway}:${s.clientPort}`).join(',');
  const port = await freePort();
  const p = startProcess('orrery-executor', [
    '--zk', zk, '--root', c!.root, '--namespace', NS, '--name', name, '--jobs', JOBS_DIR, '--data-dir', join(c!.dir, name),
    '--http-port', String(port), '--http-host', host.address, '--advertise-host', host.address, '--session-timeout', '3', '--kill-grace', '1',
  ], { ORRERY_CLUSTER_TOKEN: TOKEN }, { prefix: host.exec });
  await p.waitForLine(/"executor started"/, 60_000);
  executors.set(name, p);
  return p;
}

const api = async (path: string): Promise<{ status: number; json: any }> => {
  const r = await fetch(`${consoleUrl}/api/v1/namespaces/${NS}${path}`, { headers: { cookie } });
  return { status: r.status, json: await r.json() };
};

describe.skipIf(unavailable !== undefined)('across hosts (network namespaces)', () => {
  beforeAll(async () => {
    ensemble = await startEnsemble(3, { clientBind: '0.0.0.0' });
    c = await startCluster('across-hosts', ensemble.connectString);
    hosts.set('east', createNetNamespace(1));
    hosts.set('west', createNetNamespace(2));
    await startRemoteExecutor('east', hosts.get('east')!);
    await startRemoteExecutor('west', hosts.get('west')!);
    await c.startAllocator();
    await c.waitMembers(2);
    const consoleProcess = startProcess('orrery-console', ['--zk', ensemble.connectString, '--root', c.root, '--port', '0'], { ORRERY_ADMIN_PASSWORD: ADMIN_PASSWORD, ORRERY_CLUSTER_TOKEN: TOKEN });
    consoleUrl = (JSON.parse(await consoleProcess.waitForLine(/"msg":"console started"/, 60_000)) as { url: string }).url;
    const login = await fetch(`${consoleUrl}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'admin', password: ADMIN_PASSWORD }) });
    expect(login.status).toBe(200);
    cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  }, 180_000);

  afterAll(async () => {
    for (const host of hosts.values()) host.restore();
    await c?.close();
    await stopAllProcesses();
    for (const host of hosts.values()) host.remove();
    await ensemble?.stop();
  });

  it('shards, fires, shows run history through the console; a cut-off executor fences itself and fails over, a killed one too, with no overlap', { timeout: 180_000 }, async () => {
    const ledger = join(c!.dir, 'ledger.txt');
    // Every 4 s, four shards of 3 s runs: a cut lands inside one, which the self-fence must stop
    // (its session timeout is 3 s: the fence comes about 1.5 s after the cut).
    await c!.apply(ledgerJob('spread', ledger, { shardingTotalCount: 4, seconds: 3, cron: '*/4 * * * * *' }));
    await c!.waitApplied('spread');
    const t0 = Date.now();
    // Sharding: both executors own items and both run them.
    const assignment = await c!.assignment('spread');
    expect(Object.keys(assignment!.items).sort()).toEqual(['east', 'west']);
    await eventually(() => {
      const runners = new Set(readLedger(ledger).runs.map((r) => r.executor));
      expect([...runners].sort()).toEqual(['east', 'west']);
    }, { timeoutMs: 20_000 });

    // Run history through the console: it reads each executor's records over its link.
    await eventually(async () => {
      const runs = await api('/jobs/spread/runs?limit=50');
      expect(runs.status).toBe(200);
      const by = new Set((runs.json.runs as Array<{ executor: string }>).map((r) => r.executor));
      expect([...by].sort()).toEqual(['east', 'west']);
      expect(runs.json.unavailable).toEqual([]);
    }, { timeoutMs: 20_000 });

    // Cut east's link while a run of it is in progress: east fences itself (its run killed, nothing
    // new started), its session expires, and west re-runs the fire — after east's run was dead.
    const run = await waitRunning(ledger, 'east', 20_000);
    const cutAt = Date.now();
    hosts.get('east')!.cut();
    const rerunAt = (await waitFailoverRerun(ledger, run, { executor: 'west' })).start;
    const fenced = readLedger(ledger).runs.find((r) => r.runId === run.runId)!;
    expect(fenced.ended).toBe(false);
    expect(fenced.lastSeen).toBeLessThan(rerunAt);
    expect(executors.get('east')!.lines.some((l) => l.includes('self-fencing: stopping every run'))).toBe(true);
    // While cut off, east started no fire it had not claimed before the cut (a fire's items are
    // claimed at most 800 ms ahead, so a later fire is one it claimed cut off — there is none).
    expect(readLedger(ledger).runs.filter((r) => r.executor === 'east' && r.fireTime > cutAt + 1000)).toEqual([]);
    // West took every item.
    await eventually(async () => expect(Object.keys((await c!.assignment('spread'))!.items)).toEqual(['west']), { timeoutMs: 20_000 });

    // The link back: east joins again with a new session, without a restart, and gets items again.
    hosts.get('east')!.restore();
    const restoredAt = Date.now();
    await eventually(async () => expect(await c!.zk.exists(paths.executorPresence(NS, 'east'))).toBeTruthy(), { timeoutMs: 30_000 });
    await eventually(() => expect(readLedger(ledger).runs.some((r) => r.executor === 'east' && r.start > restoredAt)).toBe(true), { timeoutMs: 30_000 });
    const rejoinedAt = Date.now();

    // kill -9 of west's executor process alone: its fence guard, in west's namespace, kills the run
    // and closes west's session over west's link; east re-runs the fire.
    const westRun = await waitRunning(ledger, 'west', 20_000);
    const killedAt = Date.now();
    executors.get('west')!.kill('SIGKILL');
    const westRerunAt = (await waitFailoverRerun(ledger, westRun, { executor: 'east' })).start;
    const killed = readLedger(ledger).runs.find((r) => r.runId === westRun.runId)!;
    expect(killed.ended).toBe(false);
    expect(killed.lastSeen).toBeLessThan(westRerunAt);
    expect(executors.get('west')!.lines.some((l) => l.includes("closed the dead executor's ZooKeeper session"))).toBe(true);

    await c!.cli('disable', 'spread');
    const stoppedAt = Date.now();
    await waitIdle(c!.zk, 'spread', 4);
    // No overlap, no duplicate, no token out of order; every fire of every item ran but around the
    // cut and the kill.
    const fires: number[] = [];
    for (let t = Math.ceil((t0 + 1000) / 4000) * 4000; t < stoppedAt - 4000; t += 4000) fires.push(t);
    assertLedger(ledger, [{ job: 'spread', items: 4, fireTimes: fires }], [[cutAt - 4000, rejoinedAt + 4000], [killedAt - 4000, westRerunAt + 4000]], 'across hosts: a cut link, then kill -9');
  });
});
