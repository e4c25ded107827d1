// Executor features end to end, on one real executor process with a real allocator.
import { createServer } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { encodeJson, isProcessAlive, paths, readMetric, readShard, type JobConfigInput } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { stopAllProcesses, type RunningProcess } from '../src/index.js';
import { NS, TOKEN, startCluster, waitIdle, type Cluster } from './executor-support.js';

const zkConnect = inject('zkConnect');
let c: Cluster;
let e1: RunningProcess & { port: number };
let allocator: RunningProcess;
const alarms: Array<Record<string, unknown>> = [];
const hook = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.on('end', () => {
    alarms.push(JSON.parse(body) as Record<string, unknown>);
    res.end();
  });
});

beforeAll(async () => {
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const port = (hook.address() as { port: number }).port;
  c = await startCluster('exec-features', zkConnect, { alarm: { webhook: `http://127.0.0.1:${port}/hook`, silenceSeconds: 600 } });
  e1 = await c.startExecutor('e1');
  allocator = await c.startAllocator();
  await c.waitMembers(1);
});
afterAll(async () => {
  await c.close();
  await stopAllProcesses();
  hook.closeAllConnections();
  await new Promise<void>((r) => hook.close(() => r()));
});


/** Applies an enabled job and waits until its shards are applied to e1. */
async function job(config: JobConfigInput): Promise<void> {
  await c.apply({ enabled: true, ...config });
  await c.waitApplied(config.name);
}

async function lastOutcome(name: string, item = 0) {
  return (await readShard(c.zk, paths.jobShard(NS, name, item)))?.state.last;
}

const api = async (path: string, headers: Record<string, string> = {}) =>
  fetch(`http://127.0.0.1:${e1.port}${path}`, { headers: { authorization: `Bearer ${TOKEN}`, ...headers } });

describe('running shards', () => {
  it('runs a passive job only when asked, with --items and --param, and refuses a job no online executor can run', async () => {
    const ledger = join(c.dir, 'passive.txt');
    await job({ name: 'passive', type: 'shell', shardingTotalCount: 3, shardingItemParameters: '0=a,1=b,2=c', jobParameter: 'base', command: `echo "$ORRERY_SHARD_ITEM $ORRERY_SHARD_PARAM $ORRERY_JOB_PARAM" >> ${ledger}` });
    expect(c.ledger(ledger)).toEqual([]);
    expect((await c.cli('run', 'passive')).code).toBe(0);
    await eventually(() => expect(c.ledger(ledger).sort()).toEqual(['0 a base', '1 b base', '2 c base']));
    expect((await c.cli('run', 'passive', '--items', '1', '--param', 'override')).code).toBe(0);
    await eventually(() => expect(c.ledger(ledger)).toContain('1 b override'));
    expect(c.ledger(ledger)).toHaveLength(4);
    // A node job whose handler no executor has: nobody can run it.
    await c.apply({ name: 'orphan', type: 'node', handler: 'nobody', enabled: true });
    await eventually(async () => expect((await c.assignment('orphan'))?.unassigned).toHaveLength(1));
    const refused = await c.cli('run', 'orphan');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("job 'orphan' has no online executor to run it: unassigned 0 (no-executor-has-handler)");
    expect((await c.cli('run', 'passive', '--items', '7')).stderr).toContain('items: 7 not in 0..2');
  });

  it('kills the whole process tree at the timeout, grandchildren included', async () => {
    const pidFile = join(c.dir, 'grandchild.pid');
    await job({ name: 'slow-shell', type: 'shell', timeoutSeconds: 1, command: `sh -c 'sleep 60 & echo $! > ${pidFile}; wait'` });
    await c.cli('run', 'slow-shell');
    await eventually(async () => expect((await lastOutcome('slow-shell'))?.status).toBe('timed-out'), { timeoutMs: 10_000 });
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    await eventually(() => expect(isProcessAlive(grandchild)).toBe(false));
    // A timed-out run raises one alarm to the namespace webhook.
    await eventually(() => expect(alarms.find((a) => a.job === 'slow-shell')).toMatchObject({ kind: 'run-timed-out', status: 'timed-out', executor: 'e1' }));
  });

  it('kills a Node job that ignores ctx.signal at its timeout, and the executor stays healthy', async () => {
    // (The job busy-loops for 60 s: only the kill at its timeout ends it before the wait below does.)
    await job({ name: 'stubborn', type: 'node', handler: 'ignores-signal', timeoutSeconds: 1 });
    await c.cli('run', 'stubborn');
    await eventually(async () => expect((await lastOutcome('stubborn'))?.status).toBe('timed-out'), { timeoutMs: 30_000 });
    const health = await (await fetch(`http://127.0.0.1:${e1.port}/healthz`)).json() as { ok: boolean };
    expect(health.ok).toBe(true);
    const ledger = join(c.dir, 'after-stubborn.txt');
    await job({ name: 'after-stubborn', type: 'node', handler: 'ledger', jobParameter: ledger });
    await c.cli('run', 'after-stubborn');
    await eventually(async () => expect((await lastOutcome('after-stubborn'))?.status).toBe('succeeded'));
  });

  it('stops a running job (aborted), long before it would have ended', async () => {
    await job({ name: 'long', type: 'shell', command: 'sleep 30' });
    await c.cli('run', 'long');
    await eventually(async () => expect((await readShard(c.zk, paths.jobShard(NS, 'long', 0)))?.state.state).toBe('running'));
    expect((await c.cli('stop', 'long')).code).toBe(0);
    await eventually(async () => expect((await lastOutcome('long'))?.status).toBe('aborted'), { timeoutMs: 20_000 });
  });

  it('retries a failed run as new attempts of the same fire, after the backoff', async () => {
    const ledger = join(c.dir, 'retry.txt');
    await job({ name: 'flaky', type: 'shell', retry: { count: 2, backoffSeconds: 1 }, command: `echo "$ORRERY_FIRE_TIME $ORRERY_ATTEMPT" >> ${ledger}; exit 1` });
    await c.cli('run', 'flaky');
    await eventually(() => expect(c.ledger(ledger)).toHaveLength(3), { timeoutMs: 10_000 });
    const lines = c.ledger(ledger).map((l) => l.split(' '));
    expect(new Set(lines.map(([f]) => f)).size).toBe(1);
    expect(lines.map(([, a]) => a)).toEqual(['1', '2', '3']);
    await eventually(async () => expect(await lastOutcome('flaky')).toMatchObject({ status: 'failed', attempt: 3 }));
    expect(c.ledger(ledger)).toHaveLength(3);
  });

  it('records no outcome for a run whose claim was taken over behind its back', async () => {
    await job({ name: 'stale', type: 'shell', command: 'sleep 2; echo finished' });
    await c.cli('run', 'stale');
    const path = paths.jobShard(NS, 'stale', 0);
    await eventually(async () => expect((await readShard(c.zk, path))?.state.state).toBe('running'));
    const held = (await readShard(c.zk, path))!;
    // Someone takes the shard over (as a failover would): a new claim by another session.
    const takeover = { state: 'running', executor: 'intruder', session: 'deadbeef', runId: 'takeover', fireTime: Date.now(), startedAt: Date.now(), attempt: 1 };
    await c.zk.set(path, encodeJson(takeover), held.version);
    const runId = held.state.state === 'running' ? held.state.runId : '';
    await eventually(async () => {
      const res = await api(`/runs/${runId}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: 'succeeded', recorded: false });
    }, { timeoutMs: 10_000 });
    expect((await readShard(c.zk, path))?.state).toMatchObject({ state: 'running', runId: 'takeover' });
    // (Left running by a session that does not exist: the job leader releases it.)
    await c.zk.set(path, encodeJson({ state: 'idle' }));
  });
});

describe('schedules', () => {
  /**
   * Waits until an every-second witness job on the same executor has run `fires` fires after `since`:
   * time has passed on the executor's own timers, so a job that should have fired meanwhile would
   * have (the wait is on events, not a sleep). The witness is disabled again afterwards.
   */
  async function afterFires(since: number, fires = 3): Promise<void> {
    const ledger = join(c.dir, 'tick.txt');
    await job({ name: 'tick', type: 'shell', cron: '* * * * * *', command: `echo "$ORRERY_FIRE_TIME" >> ${ledger}` });
    await eventually(() => expect(c.ledger(ledger).filter((l) => Number(l) > since).length).toBeGreaterThanOrEqual(fires), { timeoutMs: 30_000 });
    await c.cli('disable', 'tick');
  }

  it('follows a live cron change and enable/disable within a second', async () => {
    const ledger = join(c.dir, 'live.txt');
    const base: JobConfigInput = { name: 'live', type: 'shell', cron: '0 0 1 1 *', command: `echo "$ORRERY_FIRE_TIME" >> ${ledger}` };
    await job(base);
    expect(c.ledger(ledger)).toEqual([]);
    const changing = Date.now();
    await c.apply({ ...base, enabled: true, cron: '* * * * * *' });
    await eventually(() => expect(c.ledger(ledger).length).toBeGreaterThanOrEqual(2));
    // The new cron's fires, from after the change on (no fire of before it caught up), every second.
    const fires = c.ledger(ledger).map(Number);
    expect(fires[0]).toBeGreaterThan(changing);
    expect(fires[1]! - fires[0]!).toBe(1000);
    await c.cli('disable', 'live');
    const disabledAt = Date.now();
    await waitIdle(c.zk, 'live', 1);
    // Three fires of another job later, nothing of `live` fired after the disable was written (a
    // fire of the next second may have been under way).
    await afterFires(disabledAt);
    expect(c.ledger(ledger).filter((l) => Number(l) > disabledAt + 1000)).toEqual([]);
  });

  it('skips fires inside a pause period, and fires again when the period no longer covers now', async () => {
    const ledger = join(c.dir, 'paused.txt');
    const now = new Date();
    const hhmm = (d: Date) => `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
    const paused: JobConfigInput = { name: 'paused', type: 'shell', cron: '* * * * * *', pausePeriodTime: `${hhmm(new Date(now.getTime() - 60_000))}-${hhmm(new Date(now.getTime() + 120_000))}`, command: `echo "$ORRERY_FIRE_TIME" >> ${ledger}` };
    await job(paused);
    await afterFires(Date.now());
    expect(c.ledger(ledger)).toEqual([]);
    await c.apply({ ...paused, enabled: true, pausePeriodTime: `${hhmm(new Date(now.getTime() + 3_600_000))}-${hhmm(new Date(now.getTime() + 3_660_000))}` });
    await eventually(() => expect(c.ledger(ledger).length).toBeGreaterThanOrEqual(2), { timeoutMs: 5000 });
    await c.cli('disable', 'paused');
  });

  /** Waits until the clock is between `from` and `to` ms past a 10-second boundary; returns that boundary. */
  async function atPhase(from: number, to: number): Promise<number> {
    await eventually(() => { const m = Date.now() % 10_000; expect(m < from || m >= to).toBe(true); }, { timeoutMs: 11_000, intervalMs: 20 });
    await eventually(() => { const m = Date.now() % 10_000; expect(m >= from && m < to).toBe(true); }, { timeoutMs: 11_000, intervalMs: 20 });
    return Date.now() - (Date.now() % 10_000);
  }

  it.each(['fire-once', 'skip'] as const)('misfire %s: a fire missed just before the shard arrived runs once (fire-once) or never (skip)', async (policy) => {
    const name = `misfire-${policy}`;
    const ledger = join(c.dir, `${name}.txt`);
    // No allocator: the job, enabled 2–3 s before a 10-second boundary, stays unassigned past it.
    await allocator.stop();
    const before = await atPhase(7000, 8000);
    await c.apply({ name, enabled: true, type: 'shell', cron: '*/10 * * * * *', misfire: { policy, thresholdSeconds: 6 }, command: `echo "$ORRERY_FIRE_TIME $ORRERY_TRIGGER" >> ${ledger}` });
    const missed = before + 10_000;
    await eventually(() => expect(Date.now()).toBeGreaterThan(missed + 500), { timeoutMs: 4000, intervalMs: 20 });
    allocator = await c.startAllocator();
    await c.waitApplied(name);
    if (policy === 'fire-once') {
      await eventually(() => expect(c.ledger(ledger)).toEqual([`${missed} misfire`]), { timeoutMs: 6000 });
    } else {
      await eventually(() => expect(c.ledger(ledger).length).toBeGreaterThanOrEqual(1), { timeoutMs: 12_000 });
      expect(c.ledger(ledger)[0]).toBe(`${missed + 10_000} cron`);
    }
    await c.cli('disable', name);
  });

  it('a job enabled just after a fire time does not run that fire: its first run is the next one', async () => {
    const ledger = join(c.dir, 'enabled-late.txt');
    const boundary = await atPhase(2000, 3000);
    // fire-once with a threshold that covers the boundary: before the job was enabled is not "missed".
    await job({ name: 'enabled-late', type: 'shell', cron: '*/10 * * * * *', misfire: { policy: 'fire-once', thresholdSeconds: 60 }, command: `echo "$ORRERY_FIRE_TIME $ORRERY_TRIGGER" >> ${ledger}` });
    await eventually(() => expect(c.ledger(ledger).length).toBeGreaterThanOrEqual(1), { timeoutMs: 12_000 });
    expect(c.ledger(ledger)[0]).toBe(`${boundary + 10_000} cron`);
    await c.cli('disable', 'enabled-late');
  });
});

describe('overlap policies', () => {
  it.each(['skip', 'queue', 'replace'] as const)('%s', async (overlap) => {
    const ledger = join(c.dir, `overlap-${overlap}.txt`);
    // Each run takes 2.5 s; fires come every second. Lines: start|end FIRE_TIME NOW_MS.
    await job({ name: `overlap-${overlap}`, type: 'shell', cron: '* * * * * *', overlap, command: `echo "start $ORRERY_FIRE_TIME $(date +%s%3N)" >> ${ledger}; sleep 2.5; echo "end $ORRERY_FIRE_TIME $(date +%s%3N)" >> ${ledger}` });
    await eventually(() => expect(c.ledger(ledger).filter((l) => l.startsWith('start')).length).toBeGreaterThanOrEqual(3), { timeoutMs: 15_000 });
    await c.cli('disable', `overlap-${overlap}`);
    await waitIdle(c.zk, `overlap-${overlap}`, 1, 10_000);
    const lines = c.ledger(ledger).map((l) => l.split(' ')).map(([kind, fire, at]) => ({ kind: kind!, fire: Number(fire), at: Number(at) }));
    const starts = lines.filter((l) => l.kind === 'start');
    const ends = lines.filter((l) => l.kind === 'end');
    if (overlap === 'replace') {
      // Each fire stops the run in progress: only the last run may reach its end, and every fire ran.
      expect(ends.length).toBeLessThanOrEqual(1);
      for (let i = 1; i < starts.length; i += 1) expect(starts[i]!.fire - starts[i - 1]!.fire).toBe(1000);
      return;
    }
    // Never two runs at once: start, end, start, end…
    for (let i = 0; i < lines.length - 1; i += 2) {
      expect(lines[i]!.kind).toBe('start');
      expect(lines[i + 1]).toMatchObject({ kind: 'end', fire: lines[i]!.fire });
    }
    for (let i = 1; i < starts.length; i += 1) {
      const previousEnd = ends[i - 1]!.at;
      if (overlap === 'skip') {
        // A fire that came while the previous run ran was dropped: the next run is a later fire.
        expect(starts[i]!.fire).toBeGreaterThan(previousEnd - 100);
      } else {
        // A fire that came while it ran runs right after it (the ledger's order: the next line).
        expect(starts[i]!.fire).toBeLessThan(previousEnd);
      }
    }
  });
});

describe('downstream jobs', () => {
  it('triggers B exactly once per fire of A whose every shard succeeded', async () => {
    const ledger = join(c.dir, 'chain.txt');
    await job({ name: 'chain-b', type: 'shell', shardingTotalCount: 2, command: `echo "B $ORRERY_SHARD_ITEM $ORRERY_FIRE_TIME" >> ${ledger}` });
    await job({ name: 'chain-a', type: 'shell', shardingTotalCount: 3, cron: '* * * * * *', downstream: ['chain-b'], command: `echo "A $ORRERY_SHARD_ITEM $ORRERY_FIRE_TIME" >> ${ledger}` });
    await eventually(() => expect(c.ledger(ledger).filter((l) => l.startsWith('B')).length).toBeGreaterThanOrEqual(6), { timeoutMs: 15_000 });
    await c.cli('disable', 'chain-a');
    await waitIdle(c.zk, 'chain-a', 3);
    await waitIdle(c.zk, 'chain-b', 2);
    const lines = c.ledger(ledger).map((l) => l.split(' '));
    const aFires = new Map<string, number>();
    for (const [k, , f] of lines) if (k === 'A') aFires.set(f!, (aFires.get(f!) ?? 0) + 1);
    const bRuns = new Map<string, number>();
    for (const [k, item, f] of lines) if (k === 'B') bRuns.set(`${f}#${item}`, (bRuns.get(`${f}#${item}`) ?? 0) + 1);
    for (const n of bRuns.values()) expect(n).toBe(1);
    for (const key of bRuns.keys()) expect(aFires.get(key.split('#')[0]!)).toBe(3);
    // Every complete fire of A triggered both items of B (the last may still have been going).
    const complete = [...aFires.entries()].filter(([, n]) => n === 3).map(([f]) => f).sort();
    for (const f of complete.slice(0, -1)) for (const item of ['0', '1']) expect(bRuns.get(`${f}#${item}`), `${f}#${item}`).toBe(1);
  });
});

describe('history and logs on the executor', () => {
  it('lists runs per job and serves a run log with offsets and ranges, only with the cluster token', async () => {
    await job({ name: 'chatty', type: 'shell', command: 'for i in $(seq 1 100); do echo "line $i"; done; echo "to stderr" >&2' });
    await c.cli('run', 'chatty');
    await eventually(async () => expect((await lastOutcome('chatty'))?.status).toBe('succeeded'));
    // The record is saved just after the outcome reaches ZooKeeper.
    let list: Array<{ runId: string; status: string; item: number; trigger: string }> = [];
    await eventually(async () => {
      list = await (await api('/runs?job=chatty')).json() as typeof list;
      expect(list[0]).toMatchObject({ status: 'succeeded', item: 0, trigger: 'run-now' });
    });
    const runId = list[0]!.runId;
    const full = await (await api(`/runs/${runId}/log`)).text();
    expect(full.split('\n')).toHaveLength(101);
    expect(await (await api(`/runs/${runId}/log?stream=stderr`)).text()).toBe('to stderr\n');
    const tail = await api(`/runs/${runId}/log`, { range: 'bytes=-9' });
    expect(tail.status).toBe(206);
    expect(await tail.text()).toBe('line 100\n');
    const fromOffset = await (await api(`/runs/${runId}/log?offset=${full.indexOf('line 99')}`)).text();
    expect(fromOffset).toBe('line 99\nline 100\n');
    expect((await fetch(`http://127.0.0.1:${e1.port}/runs?job=chatty`)).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${e1.port}/runs?job=chatty`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const scrape = await fetch(`http://127.0.0.1:${e1.port}/metrics`);
    expect(scrape.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const metrics = await scrape.text();
    expect(metrics).toMatch(/orrery_executor_runs_total\{outcome="succeeded"\} \d+/);
    // Histograms: every run's lateness and duration in the +Inf bucket, ZooKeeper reads timed.
    expect(metrics).toContain('# TYPE orrery_executor_fire_lateness_seconds histogram');
    expect(readMetric(metrics, 'orrery_executor_fire_lateness_seconds_bucket', { le: '+Inf', trigger: 'cron' })).toBe(readMetric(metrics, 'orrery_executor_fire_lateness_seconds_count', { trigger: 'cron' }));
    expect(readMetric(metrics, 'orrery_executor_run_duration_seconds_count', { outcome: 'succeeded' })).toBeGreaterThanOrEqual(1);
    expect(readMetric(metrics, 'orrery_zookeeper_operation_seconds_count', { operation: 'get' })).toBeGreaterThanOrEqual(1);
    expect(readMetric(metrics, 'orrery_executor_runs_in_progress')).toBeGreaterThanOrEqual(0);
    // The process's own figures, from prom-client's default metrics.
    for (const name of ['process_resident_memory_bytes', 'process_cpu_seconds_total', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) expect(readMetric(metrics, name), name).toBeGreaterThanOrEqual(0);
    expect(existsSync(join(c.dir, 'e1', 'runs', 'chatty', `${runId}.json`))).toBe(true);
  });

  it('refuses a second live executor with the same name', async () => {
    const clash = c.startExecutor('e1');
    await expect(clash).rejects.toThrow(/already online in namespace 'jobs'/);
  });
});
