/**
 * Failover benchmark: `kill -9` of the executor running a shard, until the re-run starts on a
 * survivor — split into detection (kill → the victim's presence is gone: its session ended),
 * reassignment (→ the job's `applied` gives the item to a survivor) and start (→ the re-run's START
 * in the run ledger) — over many trials, at a given session timeout, in two ways:
 * - `process`: the executor process alone dies (its host lives): its fence guard kills the run,
 *   waits until it is dead and closes the session itself — failover in about a second;
 * - `host`: the executor, its guard and its job's processes die together (as when the host is
 *   lost): the session ends only when the server expires it, a session timeout later.
 * Every trial's runs are checked for overlap by the run ledger's oracle (the dead run still alive
 * when its re-run starts). And the graceful handoff: SIGTERM of an executor until `applied` gives
 * its idle shards to the other executor.
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createZkClient, encodeJson, parseJobConfig, paths, readJson, type ZkClient } from '@orrery/core';
import { eventually, freePort, startZooKeeper, uniqueRoot, type ZooKeeperServer } from '@orrery/core/testing';
import { createNamespace, runCli } from '@orrery/console';
import { startProcess, type RunningProcess } from '../src/processes.js';
import { checkLedger, ledgerCommand, readLedger } from '../src/run-ledger.js';
import { distribution, type Distribution } from './executor-bench.js';
import { descendants } from './scale/hosts.js';

const NS = 'failover';

/** What dies in a trial: the executor process alone (its guard closes the session), or the executor and its guard (host-loss-like). */
export type FailoverKill = 'process' | 'host';

export interface FailoverRow { kill: FailoverKill; sessionSeconds: number; trials: number; total: Distribution; detection: Distribution; reassignment: Distribution; start: Distribution; overlaps: number }
export interface HandoffRow { trials: number; handoff: Distribution }

interface Bench {
  zk: ZkClient;
  root: string;
  dir: string;
  executors: Map<string, RunningProcess>;
  startExecutor(name: string): Promise<RunningProcess>;
  cli(...args: string[]): Promise<number>;
  close(): Promise<void>;
}

async function setup(server: ZooKeeperServer, label: string, sessionSeconds: number): Promise<Bench> {
  const root = uniqueRoot(label);
  const zk = createZkClient({ connect: server.connectString, root });
  await zk.start();
  await createNamespace(zk, NS);
  await zk.mkdirp(paths.jobs(NS));
  const dir = mkdtempSync(join(tmpdir(), `orrery-${label}-`));
  const executors = new Map<string, RunningProcess>();
  const all: RunningProcess[] = [];
  const allocator = startProcess('orrery-sharding', ['--zk', server.connectString, '--root', root, '--log-level', 'warn', '--session-timeout', String(sessionSeconds), '--debounce-ms', '100']);
  all.push(allocator);
  const bench: Bench = {
    zk, root, dir, executors,
    async startExecutor(name) {
      const p = startProcess('orrery-executor', [
        '--zk', server.connectString, '--root', root, '--namespace', NS, '--name', name, '--data-dir', join(dir, name),
        '--session-timeout', String(sessionSeconds), '--kill-grace', '1', '--http-port', String(await freePort()), '--http-host', '127.0.0.1',
      ]);
      all.push(p);
      executors.set(name, p);
      await p.waitForLine(/"executor started"/, 60_000);
      return p;
    },
    async cli(...args) {
      return runCli(['--zk', server.connectString, '--root', root, '-n', NS, ...args], { stdout: { write: () => undefined }, stderr: { write: () => undefined }, env: {} });
    },
    async close() {
      await Promise.all(all.map((p) => p.stop(3000)));
      await zk.close();
    },
  };
  return bench;
}

/** Resolves the time the node at `path` is gone (watch-driven). */
function whenGone(zk: ZkClient, path: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const check = (): void => {
      zk.exists(path, () => check()).then((stat) => { if (!stat) resolve(Date.now()); }, reject);
    };
    check();
  });
}

/** Resolves the time `applied` gives `item` to an executor other than `victim` (watch-driven). */
function whenMoved(zk: ZkClient, job: string, item: number, victim: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const check = (): void => {
      zk.get(paths.jobApplied(NS, job), () => check()).then(({ data }) => {
        const items = (JSON.parse(data!.toString()) as { items: Record<string, number[]> }).items;
        if (Object.entries(items).some(([e, list]) => e !== victim && list.includes(item))) resolve(Date.now());
      }, reject);
    };
    check();
  });
}


/** The pid of the fence guard `executor` started (from its log line). */
function guardPid(executor: RunningProcess): number {
  const line = executor.lines.find((l) => l.includes('"msg":"fence guard started"'));
  const pid = Number(/"pid":(\d+),"msg":"fence guard started"/.exec(line ?? '')?.[1]);
  if (!(pid > 0)) throw new Error('no fence guard pid in the executor\'s log');
  return pid;
}

/** The process groups an executor's orphan records (`<data-dir>/pgroups/`) name: its job runs in progress. */
function recordedGroups(dataDir: string): number[] {
  const dir = join(dataDir, 'pgroups');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).map((f) => Number(/^(\d+)\.json$/.exec(f)?.[1])).filter((pgid) => pgid > 1);
}

/** `trials` kill -9 failovers at `sessionSeconds`, killing the executor alone or with its guard. */
export async function failoverTrials(server: ZooKeeperServer, sessionSeconds: number, trials: number, kill: FailoverKill = 'host'): Promise<FailoverRow> {
  const b = await setup(server, `failover-${kill}-${sessionSeconds}s`, sessionSeconds);
  const ledger = join(b.dir, 'ledger.txt');
  const names = ['fo-a', 'fo-b', 'fo-c'];
  const totals: number[] = [];
  const detection: number[] = [];
  const reassignment: number[] = [];
  const start: number[] = [];
  try {
    for (const n of names) await b.startExecutor(n);
    // A passive job (run on demand) of one shard whose runs last a minute: each trial starts one.
    const job = parseJobConfig({ name: 'victim-job', type: 'shell', shardingTotalCount: 1, failover: true, command: ledgerCommand(ledger, 60), enabled: true });
    await b.zk.create(paths.job(NS, job.name), encodeJson(job));
    for (let trial = 0; trial < trials; trial += 1) {
      await eventually(async () => {
        const applied = await readJson<{ items: Record<string, number[]> }>(b.zk, paths.jobApplied(NS, job.name));
        if (!Object.values(applied?.value.items ?? {}).some((l) => l.includes(0))) throw new Error('not applied');
      }, { timeoutMs: 30_000 });
      const before = readLedger(ledger).runs.length;
      if ((await b.cli('run', job.name)) !== 0) throw new Error('run-now failed');
      let victim = '';
      await eventually(() => {
        const runs = readLedger(ledger).runs;
        if (runs.length <= before) throw new Error('not started');
        victim = runs.at(-1)!.executor;
      }, { timeoutMs: 10_000, intervalMs: 10 });
      const runsBefore = readLedger(ledger).runs.length;
      const gone = whenGone(b.zk, paths.executorPresence(NS, victim));
      const moved = whenMoved(b.zk, job.name, 0, victim);
      const victimProcess = b.executors.get(victim)!;
      // Host-loss-like: the guard and the job's processes die with the executor (a lost host takes
      // all of them), so nothing is left to close the session — it expires.
      if (kill === 'host') {
        // Frozen first, so it cannot see its run die and record it before it dies itself. Then
        // every process it started (guard, jobs, workers): a run's orphan record is written just
        // after its spawn, so a run started the instant before the freeze may have none yet (the
        // suspected cause of the 7 overlaps one bench counted).
        victimProcess.kill('SIGSTOP');
        process.kill(guardPid(victimProcess), 'SIGKILL');
        for (const pid of descendants(victimProcess.pid)) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone already
          }
        }
        for (const pgid of recordedGroups(join(b.dir, victim))) {
          try {
            process.kill(-pgid, 'SIGKILL');
          } catch {
            // gone already
          }
        }
      }
      const killedAt = Date.now();
      victimProcess.kill('SIGKILL');
      const detectedAt = await gone;
      const movedAt = await moved;
      let startedAt = 0;
      await eventually(() => {
        const rerun = readLedger(ledger).runs.slice(runsBefore).find((r) => r.trigger === 'failover');
        if (!rerun) throw new Error('no re-run yet');
        startedAt = rerun.start;
      }, { timeoutMs: sessionSeconds * 1000 + 20_000, intervalMs: 5 }).catch(async (error: unknown) => {
        // What the shard, the applied map and the commands say, for whoever reads the failure.
        const shard = (await b.zk.get(paths.jobShard(NS, job.name, 0))).data?.toString();
        const applied = (await b.zk.get(paths.jobApplied(NS, job.name))).data?.toString();
        const commands = await b.zk.getChildren(paths.jobCommands(NS, job.name)).catch(() => []);
        throw new Error(`trial ${trial} (${kill}, ${sessionSeconds} s): no failover re-run of the run of ${victim}; shard ${shard}; applied ${applied}; commands ${commands.join(',')}; ledger since: ${JSON.stringify(readLedger(ledger).runs.slice(runsBefore - 1))}`, { cause: error });
      });
      console.error(`failover bench: ${kill}, ${sessionSeconds} s, trial ${trial}: re-run ${Math.round(startedAt - killedAt)} ms after the kill`);
      totals.push(startedAt - killedAt);
      detection.push(detectedAt - killedAt);
      reassignment.push(movedAt - detectedAt);
      start.push(startedAt - movedAt);
      // Stop the re-run and bring the victim back for the next trial.
      await b.cli('stop', job.name);
      await b.startExecutor(victim);
    }
  } finally {
    await b.close();
  }
  // Each trial's dead run against its re-run (and every run against the next): the oracle's overlaps.
  const overlaps = checkLedger(readLedger(ledger).runs, [], []).overlaps.length;
  return { kill, sessionSeconds, trials, total: distribution(totals), detection: distribution(detection), reassignment: distribution(reassignment), start: distribution(start), overlaps };
}

/** `trials` graceful shutdowns: SIGTERM until `applied` gives the leaver's idle shards to the other executor. */
export async function handoffTrials(server: ZooKeeperServer, trials: number): Promise<HandoffRow> {
  const b = await setup(server, 'handoff', 10);
  const values: number[] = [];
  try {
    await b.startExecutor('ho-a');
    await b.startExecutor('ho-b');
    const job = parseJobConfig({ name: 'idle-job', type: 'shell', cron: '0 0 1 1 *', shardingTotalCount: 8, command: 'exit 0', enabled: true });
    await b.zk.create(paths.job(NS, job.name), encodeJson(job));
    for (let trial = 0; trial < trials; trial += 1) {
      // Both hold shards: the balance is back after the last restart.
      await eventually(async () => {
        const applied = await readJson<{ items: Record<string, number[]> }>(b.zk, paths.jobApplied(NS, job.name));
        if ((applied?.value.items['ho-a']?.length ?? 0) !== 4 || (applied?.value.items['ho-b']?.length ?? 0) !== 4) throw new Error('not balanced');
      }, { timeoutMs: 30_000, intervalMs: 20 });
      const moved = whenMoved(b.zk, job.name, (await readJson<{ items: Record<string, number[]> }>(b.zk, paths.jobApplied(NS, job.name)))!.value.items['ho-a']![0]!, 'ho-a');
      const leaver = b.executors.get('ho-a')!;
      const signalledAt = Date.now();
      leaver.kill('SIGTERM');
      values.push((await moved) - signalledAt);
      await leaver.exited;
      await b.startExecutor('ho-a');
    }
  } finally {
    await b.close();
  }
  return { trials, handoff: distribution(values) };
}

export interface FailoverBenchResult { rows: FailoverRow[]; handoff: HandoffRow; tickMs: number }

/**
 * The rows: the process alone (`trials` trials, about 3 s each), and host-loss-like at a 10 s and a
 * 2 s session (`hostTrials` each: every one waits for the session to expire).
 */
export async function runFailoverBench(trials = 20, hostTrials = 10): Promise<FailoverBenchResult> {
  // tickTime 500 ms: sessions of 1–10 s are allowed (2–20 ticks), and expiry comes within one tick.
  const tickMs = 500;
  const server = await startZooKeeper({ tickTimeMs: tickMs, fastStart: false });
  try {
    const rows = [await failoverTrials(server, 10, trials, 'process'), await failoverTrials(server, 10, hostTrials, 'host'), await failoverTrials(server, 2, hostTrials, 'host')];
    const handoff = await handoffTrials(server, 10);
    return { rows, handoff, tickMs };
  } finally {
    await server.stop();
  }
}
