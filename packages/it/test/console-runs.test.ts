// Runs and logs seen through the console and the CLI, with real processes on a real ZooKeeper: two
// orrery-executor processes (cluster token), orrery-sharding, and orrery-console. A running shell
// job's log tailed live over server-sent events ends with its outcome; `logs -f` follows a run to
// its end; `get shards` shows each item; a job's runs are merged from both executors, and once one
// is killed its runs are named unavailable while the other's are still listed.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { paths, readShard } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { runCli } from '@orrery/console';
import { startProcess, stopAllProcesses, type RunningProcess } from '../src/index.js';
import { NS, TOKEN, startCluster, waitIdle, type Cluster } from './executor-support.js';

const zkConnect = inject('zkConnect');
const ADMIN_PASSWORD = 'console-runs-admin-pw';
// Prints a line every 200 ms for 2 s.
const TICKER = 'for i in 1 2 3 4 5 6 7 8 9 10; do echo "line $i"; sleep 0.2; done';

let c: Cluster;
let e1: RunningProcess;
let e2: RunningProcess;
let consoleUrl: string;
let cookie: string;

/** The CLI with the cluster token (or without, when `token` is empty). */
async function cli(token: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const env = token ? { ORRERY_CLUSTER_TOKEN: token, TZ: 'UTC' } : { TZ: 'UTC' };
  const code = await runCli(['--zk', zkConnect, '--root', c.root, '-n', NS, ...args], { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, env });
  return { code, stdout, stderr };
}

async function api(path: string): Promise<{ status: number; json: any }> {
  const response = await fetch(`${consoleUrl}/api/v1/namespaces/${NS}${path}`, { headers: { cookie } });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

/** Waits until item `item` of `job` runs, and returns its run id. */
async function runningRun(job: string, item = 0): Promise<string> {
  let runId = '';
  await eventually(async () => {
    const shard = await readShard(c.zk, paths.jobShard(NS, job, item));
    expect(shard?.state.state).toBe('running');
    runId = (shard!.state as { runId: string }).runId;
  }, { timeoutMs: 20_000 });
  return runId;
}

/** One server-sent event as received, with when it came. */
interface Received {
  event: string;
  data: any;
  at: number;
}

/** Reads an SSE answer to its end, event by event. */
async function readEvents(url: string): Promise<{ contentType: string | null; events: Received[]; heartbeatsOrComments: number }> {
  const response = await fetch(url, { headers: { cookie, accept: 'text/event-stream' } });
  expect(response.status).toBe(200);
  const events: Received[] = [];
  let comments = 0;
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const lines = block.split('\n');
      if (lines.every((l) => l.startsWith(':') || l.startsWith('retry:'))) {
        comments += 1;
        continue;
      }
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
      const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      events.push({ event, data: JSON.parse(data), at: Date.now() });
    }
  }
  return { contentType: response.headers.get('content-type'), events, heartbeatsOrComments: comments };
}

beforeAll(async () => {
  c = await startCluster('console-runs', zkConnect);
  e1 = await c.startExecutor('e1');
  e2 = await c.startExecutor('e2');
  await c.startAllocator();
  await c.waitMembers(2);
  const consoleProcess = startProcess('orrery-console', ['--zk', zkConnect, '--root', c.root, '--port', '0'], { ORRERY_ADMIN_PASSWORD: ADMIN_PASSWORD, ORRERY_CLUSTER_TOKEN: TOKEN });
  const line = await consoleProcess.waitForLine(/"msg":"console started"/, 60_000);
  consoleUrl = (JSON.parse(line) as { url: string }).url;
  const login = await fetch(`${consoleUrl}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'admin', password: ADMIN_PASSWORD }) });
  expect(login.status).toBe(200);
  cookie = login.headers.get('set-cookie')!.split(';')[0]!;
}, 120_000);
afterAll(async () => {
  await c?.close();
  await stopAllProcesses();
});

describe('runs and logs in the console and the CLI', () => {
  it('tails a running shell job over server-sent events, in order, ending with its outcome', async () => {
    await c.apply({ name: 'ticker', type: 'shell', shardingTotalCount: 1, enabled: true, command: TICKER });
    await c.waitApplied('ticker');
    expect((await cli(TOKEN, 'run', 'ticker')).code).toBe(0);
    const runId = await runningRun('ticker');
    const { contentType, events } = await readEvents(`${consoleUrl}/api/v1/namespaces/${NS}/jobs/ticker/runs/${runId}/log/stream`);
    expect(contentType).toMatch(/^text\/event-stream/);
    const kinds = events.map((e) => e.event);
    expect(kinds.at(-1)).toBe('end');
    expect(kinds.slice(0, -1).every((k) => k === 'log')).toBe(true);
    // Live: the log came in several pieces over the run's two seconds, not all at the end.
    expect(kinds.filter((k) => k === 'log').length).toBeGreaterThanOrEqual(3);
    // … and the first piece arrived while the run was still going (an order, not a time).
    expect(events[0]!.at).toBeLessThan(events.at(-1)!.data.run.endedAt as number);
    const logs = events.filter((e) => e.event === 'log').map((e) => e.data);
    for (let i = 1; i < logs.length; i += 1) expect(logs[i].offset).toBe(logs[i - 1].next); // contiguous, in order
    expect(logs.map((l) => l.text).join('')).toBe(Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join(''));
    expect(events.at(-1)!.data.run).toMatchObject({ runId, status: 'succeeded', exitCode: 0, job: 'ticker' });
    // The same run afterwards: its record, its log with a range.
    const one = await api(`/jobs/ticker/runs/${runId}`);
    expect(one).toMatchObject({ status: 200, json: { runId, status: 'succeeded' } });
    const part = await fetch(`${consoleUrl}/api/v1/namespaces/${NS}/jobs/ticker/runs/${runId}/log`, { headers: { cookie, range: 'bytes=0-6' } });
    expect([part.status, await part.text()]).toEqual([206, 'line 1\n']);
  }, 60_000);

  it('CLI: get shards shows each item; logs -f follows a running run to its end and prints the outcome', async () => {
    await waitIdle(c.zk, 'ticker', 1);
    expect((await cli(TOKEN, 'run', 'ticker')).code).toBe(0);
    const runId = await runningRun('ticker');
    const shards = await cli('', 'get', 'shards', 'ticker', '-o', 'json');
    expect(shards.code, shards.stderr).toBe(0);
    const view = JSON.parse(shards.stdout);
    expect(view.items).toEqual([expect.objectContaining({ item: 0, state: 'running', owner: expect.stringMatching(/^e[12]$/), running: expect.objectContaining({ runId }), last: expect.objectContaining({ status: 'succeeded' }) })]);
    const table = await cli('', 'get', 'shards', 'ticker');
    expect(table.stdout).toMatch(/^ITEM\s+STATE\s+OWNER\s+RUNNING SINCE/);
    expect(table.stdout).toContain(runId);
    expect(table.stdout).toMatch(/times in UTC/);

    const followed = await cli(TOKEN, 'logs', 'ticker', runId, '-f');
    expect(followed.code, followed.stderr).toBe(0);
    expect(followed.stdout).toBe(Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join(''));
    expect(followed.stderr).toMatch(new RegExp(`run ${runId} succeeded \\(exit 0\\)`));
    const whole = await cli(TOKEN, 'logs', 'ticker', runId);
    expect(whole.stdout).toBe(followed.stdout);
    const after = JSON.parse((await cli('', 'get', 'shards', 'ticker', '-o', 'json')).stdout);
    expect(after.items[0]).toMatchObject({ state: 'succeeded', running: null, last: { runId, status: 'succeeded' } });

    const noToken = await cli('', 'logs', 'ticker', runId);
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toMatch(/ORRERY_CLUSTER_TOKEN/);
  }, 60_000);

  it("merges a job's runs from both executors; a killed executor's runs are named unavailable, the other's listed", async () => {
    const ledger = join(c.dir, 'pair.txt');
    await c.apply({ name: 'pair', type: 'shell', shardingTotalCount: 2, enabled: true, command: `echo "item $ORRERY_SHARD_ITEM on $ORRERY_EXECUTOR" | tee -a ${ledger}` });
    await c.waitApplied('pair');
    const owners = await c.assignment('pair');
    expect(Object.keys(owners!.items).sort()).toEqual(['e1', 'e2']);
    // Both owners have taken their item in (a run-now reaches only the items an executor runs now).
    await Promise.all([e1, e2].map((e) => e.waitForLine(/"job":"pair".*"msg":"items changed"/, 20_000)));
    expect((await cli(TOKEN, 'run', 'pair')).code).toBe(0);
    await eventually(() => expect(c.ledger(ledger)).toHaveLength(2), { timeoutMs: 20_000 });
    await waitIdle(c.zk, 'pair', 2);

    let listed: any;
    await eventually(async () => {
      const r = await cli(TOKEN, 'get', 'runs', 'pair', '-o', 'json');
      expect(r.code, r.stderr).toBe(0);
      listed = JSON.parse(r.stdout);
      expect(listed.runs.map((x: { executor: string }) => x.executor).sort()).toEqual(['e1', 'e2']); // the records are saved just after the outcome
    }, { timeoutMs: 10_000 });
    expect(listed.unavailable).toEqual([]);
    const startedAts = listed.runs.map((x: { startedAt: number }) => x.startedAt);
    expect(startedAts).toEqual([...startedAts].sort((a, b) => b - a));
    const viaApi = await api('/jobs/pair/runs?limit=10');
    expect(viaApi.status).toBe(200);
    expect(viaApi.json.runs.map((x: { runId: string }) => x.runId)).toEqual(listed.runs.map((x: { runId: string }) => x.runId));
    const e1Run = listed.runs.find((x: { executor: string }) => x.executor === 'e1').runId;

    e2.kill('SIGKILL');
    await e2.exited;
    // While its session lingers it is unreachable; once the session is gone it is offline: named either way.
    const table = await cli(TOKEN, 'get', 'runs', 'pair');
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(e1Run);
    expect(table.stdout).toMatch(/^RUN\s+ITEM\s+STATUS\s+STARTED/);
    expect(table.stderr).toMatch(/warning: runs of executor 'e2' are missing \((unreachable|offline|timeout)\)/);
    await eventually(async () => {
      const r = await api('/jobs/pair/runs');
      expect(r.status).toBe(200);
      expect(r.json.runs.map((x: { runId: string }) => x.runId)).toEqual([e1Run]);
      expect(r.json.unavailable).toEqual([expect.objectContaining({ executor: 'e2', reason: 'offline' })]);
    }, { timeoutMs: 20_000 });
    const json = JSON.parse((await cli(TOKEN, 'get', 'runs', 'pair', '-o', 'json')).stdout);
    expect(json.runs.map((x: { runId: string }) => x.runId)).toEqual([e1Run]);
    expect(json.unavailable).toEqual([expect.objectContaining({ executor: 'e2', reason: 'offline', message: expect.stringContaining('offline') })]);
  }, 90_000);
});
