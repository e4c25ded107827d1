/**
 * Console benchmark: a namespace of 10,000 jobs served by a real `orrery-console` process to 10
 * concurrent clients (autocannon) — the job list (a page of 50 after a different cursor each request,
 * as the scale run asks it, and a filtered page at a different offset each request: each is
 * rendered) and the job detail (a different job each request): latency p50 /
 * p99 / max and requests/s; ZooKeeper requests per GET in steady state, counted on the server
 * (`mntr`'s `zk_packets_received` around each phase, minus what the console's idle session sends
 * over the same time: its pings); and the console's RSS.
 *
 * The jobs are a realistic mix written straight to ZooKeeper (valid configs from core's
 * `parseJobConfig`): five teams, crons of several periods in three time zones, passive jobs, one in
 * seven disabled, 3 shards each, with an assignment and shard nodes holding last outcomes (some
 * failed, some running) so that the list has states to summarise.
 */
import { measureJobsPage, type JobsPageBenchResult } from './console-ui-bench.js';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createZkClient, encodeJson, parseJobConfig, parseShardState, paths, type JobConfig, type ShardState, type ZkClient } from '@orrery/core';
import { eventually, startZooKeeper, uniqueRoot, type ZooKeeperServer } from '@orrery/core/testing';
import { createNamespace } from '@orrery/console';
import { startProcess, type RunningProcess } from '../src/processes.js';

/** The namespace the bench fills. */
const NS = 'bench';
/** Jobs in the namespace. */
export const CONSOLE_BENCH_JOBS = 10_000;
/** Concurrent clients (autocannon connections). */
export const CONSOLE_BENCH_CONNECTIONS = 10;
/** Shards per job. */
const SHARDS = 3;
/** Creates in flight while the namespace is written. */
const WRITE_CONCURRENCY = 256;
/** The first admin's password (ORRERY_ADMIN_PASSWORD). */
const ADMIN_PASSWORD = 'bench-admin-password';
/**
 * Warm-up of each route before it is measured, in seconds (the JIT, the schedule memo): at 3,000–
 * 8,000 requests a second, 3 s is over ten thousand requests (5 s until 2026-11-29).
 */
const WARMUP_SECONDS = 3;
/** How long the console may take to load its cache and listen, in ms. */
const CONSOLE_START_TIMEOUT_MS = 180_000;

const TEAMS = ['billing', 'search', 'reports', 'etl', 'mail'] as const;
const TASKS = ['sync', 'export', 'cleanup', 'digest', 'rollup', 'reindex', 'backfill'] as const;
const ZONES = ['UTC', 'UTC', 'Europe/Berlin', 'America/New_York'] as const;

/**
 * The lists measured, each a page of 50: by a name substring matching one team's jobs (a fifth:
 * 2,000; the list filters names only), and by a group holding 3 in 10 jobs (3,000; the list reads
 * every job's parsed config).
 */
export const LIST_FILTERS = { name: 'name=report', group: 'group=nightly' } as const;
const listPath = (filter: string) => `/api/v1/namespaces/${NS}/jobs?${filter}&limit=50`;

/** Job `i` of the namespace (pure): its name, tier and the config as sent. */
export function benchJob(i: number): { name: string; tier: string; input: Record<string, unknown> } {
  const team = TEAMS[i % TEAMS.length]!;
  const task = TASKS[Math.floor(i / TEAMS.length) % TASKS.length]!;
  const name = `${team}-${task}-${String(i).padStart(5, '0')}`;
  const minute = i % 60;
  // A period mix: hourly, daily, every 5 minutes, every 30 seconds, and passive (no cron).
  const kind = i % 10;
  const [tier, cron] = kind < 4 ? ['hourly', `${minute} * * * *`]
    : kind < 7 ? ['nightly', `${minute} ${i % 6} * * *`]
      : kind === 7 ? ['frequent', '*/5 * * * *']
        : kind === 8 ? ['frequent', '*/30 * * * * *']
          : ['on-demand', undefined];
  const node = i % 5 === 3;
  return {
    name,
    tier,
    input: {
      name,
      description: `${team}: ${task} (${tier})`,
      ...(node ? { type: 'node', handler: `${task}-handler` } : { type: 'shell', command: `/opt/${team}/bin/${task} --item "$ORRERY_SHARD_ITEM"` }),
      ...(cron ? { cron, timeZone: ZONES[i % ZONES.length] } : {}),
      shardingTotalCount: SHARDS,
      ...(i % 3 === 0 ? { shardingItemParameters: { 0: 'eu', 1: 'us', 2: 'apac' } } : {}),
      enabled: i % 7 !== 0,
      timeoutSeconds: i % 4 === 0 ? 600 : 0,
      groups: [team, tier],
      ...(i % 11 === 0 ? { retry: { count: 2, backoffSeconds: 30 } } : {}),
    },
  };
}

/** The shard nodes of job `i` (pure): none for a passive job never run, else each item's last outcome. */
function benchShards(i: number, config: JobConfig, now: number): ShardState[] | undefined {
  if (config.cron === undefined && i % 20 !== 9) return undefined;
  return Array.from({ length: SHARDS }, (_, item) => {
    const seed = (i * SHARDS + item) % 100;
    const endedAt = now - 60_000 - ((i * 7919 + item * 104_729) % 3_600_000);
    const last = {
      status: seed < 5 ? 'failed' : seed === 5 ? 'timed-out' : 'succeeded',
      exitCode: seed < 5 ? 1 : seed === 5 ? null : 0,
      startedAt: endedAt - 1500 - seed * 10, endedAt, durationMs: 1500 + seed * 10,
      executor: `exec-${(item % 3) + 1}`, runId: `run-${i}-${item}`, fireTime: endedAt - 1600 - seed * 10, attempt: 1, fencingToken: i * SHARDS + item,
      message: seed < 5 ? 'exit code 1: upstream returned 503' : seed === 5 ? 'timed out after 600 s' : '',
    };
    if (seed === 99 && config.enabled) {
      return parseShardState({ state: 'running', executor: `exec-${(item % 3) + 1}`, session: '1000a1b2c3d40001', runId: `run-${i}-${item}-now`, fireTime: now - 2000, startedAt: now - 1900, attempt: 1, last });
    }
    return parseShardState({ state: 'idle', last });
  });
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` in flight. */
export async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) {
      const i = next;
      next += 1;
      await task(i);
    }
  }));
}

/** Creates the bench's namespace with `count` jobs, their assignments and shard nodes; returns the node count. */
export async function writeBenchNamespace(zk: ZkClient, count: number, now: number): Promise<number> {
  await createNamespace(zk, NS);
  await zk.mkdirp(paths.jobs(NS));
  let nodes = 0;
  await pool(count, WRITE_CONCURRENCY, async (i) => {
    const { name, input } = benchJob(i);
    const config = parseJobConfig(input);
    await zk.create(paths.job(NS, name), encodeJson(config));
    nodes += 1;
    const writes: Array<Promise<unknown>> = [];
    if (config.enabled) {
      const items = Object.fromEntries(Array.from({ length: SHARDS }, (_, item) => [`exec-${item + 1}`, [item]]));
      writes.push(zk.create(paths.jobAssignment(NS, name), encodeJson({ epoch: 1, allocatorEpoch: 1, items, unassigned: [], writtenAt: now })));
    }
    const shards = benchShards(i, config, now);
    if (shards) {
      writes.push(zk.create(paths.jobShards(NS, name)).then(() => Promise.all(shards.map((s, item) => zk.create(paths.jobShard(NS, name, item), encodeJson(s))))));
    }
    await Promise.all(writes);
    nodes += (config.enabled ? 1 : 0) + (shards ? 1 + shards.length : 0);
  });
  return nodes;
}

/** A server counter from `mntr`. */
async function mntrCounter(server: ZooKeeperServer, key: string): Promise<number> {
  const text = await server.fourLetter('mntr');
  const m = new RegExp(`^${key}\\s+(\\d+)`, 'm').exec(text);
  if (!m) throw new Error(`mntr has no ${key}:\n${text}`);
  return Number(m[1]);
}

/** Packets ZooKeeper received on the session `sessionId` (hex), from `cons`; undefined if not listed. */
async function sessionPackets(server: ZooKeeperServer, sessionId: string): Promise<number | undefined> {
  const want = sessionId.replace(/^0x/i, '').replace(/^0+/, '').toLowerCase();
  for (const line of (await server.fourLetter('cons')).split('\n')) {
    const sid = /sid=0x([0-9a-f]+)/i.exec(line)?.[1]?.replace(/^0+/, '').toLowerCase();
    if (sid === want) return Number(/recved=(\d+)/.exec(line)?.[1]);
  }
  return undefined;
}

/** A process's memory (MB) and CPU time (clock ticks) from /proc. */
function procStats(pid: number): { rssMb: number; peakRssMb: number; cpuTicks: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024, cpuTicks: Number(stat[11]) + Number(stat[12]) };
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

// autocannon ships no types: the part of its API the benches use.
export interface AutocannonRequest { method?: string; path?: string; setupRequest?: (request: { path: string }) => { path: string } }
interface AutocannonResult {
  latency: { p50: number; p99: number; max: number; average: number };
  requests: { average: number; total: number };
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
}
type Autocannon = (options: { url: string; connections: number; duration: number; headers: Record<string, string>; requests?: AutocannonRequest[] }) => Promise<AutocannonResult>;
export const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** One measured route. */
export interface ConsoleRouteRow {
  route: string;
  /** Latency in ms (autocannon's histogram has 1 ms resolution). */
  p50: number;
  p99: number;
  max: number;
  requestsPerSecond: number;
  requests: number;
  /** Answers other than 2xx, errors and timeouts. */
  failed: number;
  /** ZooKeeper packets received during the phase, all sessions (mntr). */
  zkPackets: number;
  /** The same, on the console's session only (cons); undefined if it was not found. */
  consoleSessionPackets: number | undefined;
  /** (packets − the idle baseline over the same time) ÷ requests. */
  zkRequestsPerGet: number;
  /** The console's CPU during the phase (% of one core). */
  consoleCpuPercent: number;
}

/** What {@link runConsoleBench} measured. */
export interface ConsoleBenchResult {
  jobs: number;
  nodes: number;
  writeSeconds: number;
  /** From spawning the console to `/healthz` ok (its cache loaded). */
  consoleStartSeconds: number;
  seconds: number;
  /** Each route's warm-up before it was measured, in seconds (absent in older results: 5). */
  warmupSeconds?: number;
  /** Packets ZooKeeper received over an idle window of `seconds` (the console's pings), all sessions and the console's. */
  idle: { zkPackets: number; consoleSessionPackets: number | undefined };
  rows: ConsoleRouteRow[];
  /** The console's RSS in MB: loaded and idle `seconds` (before any load); `seconds` after the load; its peak (VmHWM). */
  rss: { loadedMb: number; afterMb: number; peakMb: number };
  /** The UI's jobs page in Chromium (after the RSS figures; undefined without Chromium). */
  ui: JobsPageBenchResult | { error: string } | undefined;
}

/**
 * A module to preload in the console (`--cpu-prof` is not allowed in NODE_OPTIONS, and startProcess
 * passes no node flags): it starts V8's profiler at once and writes `console.cpuprofile` into `dir`
 * on SIGUSR2.
 */
function profilerPreload(dir: string): string {
  const file = JSON.stringify(`${dir}/${CPU_PROFILE_FILE}`);
  const code = `import{Session}from'node:inspector';import{writeFileSync}from'node:fs';const s=new Session();s.connect();s.post('Profiler.enable');s.post('Profiler.start');process.on('SIGUSR2',()=>s.post('Profiler.stop',(e,r)=>{if(!e)writeFileSync(${file},JSON.stringify(r.profile))}));`;
  return `data:text/javascript,${encodeURIComponent(code)}`;
}

/** The profile's file name in the profile directory. */
const CPU_PROFILE_FILE = 'console.cpuprofile';

interface StartedConsole { process: RunningProcess; url: string; sessionId: string; startSeconds: number }

async function startConsole(server: ZooKeeperServer, root: string, cpuProfileDir: string | undefined): Promise<StartedConsole> {
  const t0 = performance.now();
  const env = { ORRERY_ADMIN_PASSWORD: ADMIN_PASSWORD, ...(cpuProfileDir ? { NODE_OPTIONS: `--import=${profilerPreload(cpuProfileDir)}` } : {}) };
  const proc = startProcess('orrery-console', ['--zk', server.connectString, '--root', root, '--port', '0'], env);
  try {
    const line = await proc.waitForLine(/"msg":"console started"/, CONSOLE_START_TIMEOUT_MS);
    const url = (JSON.parse(line) as { url: string }).url;
    // Ready: ZooKeeper connected and the cache loaded.
    for (;;) {
      const health = await fetch(`${url}/healthz`).catch(() => undefined);
      if (health?.ok && ((await health.json()) as { ok?: boolean }).ok === true) break;
      if (performance.now() - t0 > CONSOLE_START_TIMEOUT_MS) throw new Error('the console did not become healthy');
      await new Promise((r) => setTimeout(r, 100));
    }
    const startSeconds = (performance.now() - t0) / 1000;
    const stateLine = await proc.waitForLine(/"sessionId":"[0-9a-fA-Fx]+".*"msg":"zookeeper connection state"/, 5000);
    return { process: proc, url, sessionId: (JSON.parse(stateLine) as { sessionId: string }).sessionId, startSeconds };
  } catch (error) {
    await proc.stop(10_000);
    throw error;
  }
}

/** Logs in as the first admin and creates an API token; returns the `Authorization` header's value. */
async function apiToken(url: string): Promise<string> {
  const login = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'admin', password: ADMIN_PASSWORD }) });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const created = await fetch(`${url}/api/v1/tokens`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify({ name: 'bench' }) });
  if (created.status !== 201) throw new Error(`token: ${created.status} ${await created.text()}`);
  return `Bearer ${((await created.json()) as { token: string }).token}`;
}

type Route = 'list-cursor' | 'list-name' | 'list-group' | 'detail';

/**
 * One GET whose path is `path(i)` for i striding through [0, count): a stride coprime with the count
 * visits every i, in no order a cache (or the console's memo of pages) could favour.
 */
export function strideRequests(count: number, path: (i: number) => string): AutocannonRequest[] {
  let next = 0;
  return [{
    method: 'GET',
    setupRequest: (request) => {
      next = (next + 7919) % count;
      return { ...request, path: path(next) };
    },
  }];
}

/**
 * The phase's requests: a filtered list page at a different offset each request (more pages than the
 * console keeps rendered, so each is rendered: the cost of a list, not of its memo), or the detail of
 * a different job each time.
 */
function routeRequests(route: Route, names: readonly string[], matching: number): AutocannonRequest[] {
  if (route === 'detail') return strideRequests(names.length, (i) => `/api/v1/namespaces/${NS}/jobs/${names[i]}`);
  if (route === 'list-cursor') return strideRequests(names.length, (i) => `/api/v1/namespaces/${NS}/jobs?limit=50&cursor=${names[i]}`);
  const list = listPath(LIST_FILTERS[route === 'list-name' ? 'name' : 'group']);
  return strideRequests(Math.max(1, matching - 50), (offset) => `${list}&offset=${offset}`);
}

interface Counters { packets: number; session: number | undefined; cpuTicks: number; at: number }

async function counters(server: ZooKeeperServer, started: StartedConsole): Promise<Counters> {
  const [packets, session] = await Promise.all([mntrCounter(server, 'zk_packets_received'), sessionPackets(server, started.sessionId)]);
  return { packets, session, cpuTicks: procStats(started.process.pid).cpuTicks, at: performance.now() };
}

const delta = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : b - a);

/**
 * The benchmark; `seconds` per measured phase (and for the idle baseline). With `cpuProfileDir`, the
 * console writes a V8 CPU profile of its start-up and every phase there (`console.cpuprofile`, see
 * {@link profilerPreload}). Stops everything it started.
 */
export async function runConsoleBench(seconds = 20, cpuProfileDir?: string): Promise<ConsoleBenchResult> {
  // The JVM's full JIT and default collector, as production runs.
  const server = await startZooKeeper({ fastStart: false });
  let zk: ZkClient | undefined;
  let started: StartedConsole | undefined;
  try {
    const root = uniqueRoot('bench-console');
    zk = createZkClient({ connect: server.connectString, root });
    await zk.start();
    const t0 = performance.now();
    const nodes = await writeBenchNamespace(zk, CONSOLE_BENCH_JOBS, Date.now());
    const writeSeconds = (performance.now() - t0) / 1000;
    // Only the console's session is left on the server while measuring.
    await zk.close();
    zk = undefined;

    started = await startConsole(server, root, cpuProfileDir);
    const c = started;
    const authorization = await apiToken(c.url);
    const headers = { authorization };
    const names = Array.from({ length: CONSOLE_BENCH_JOBS }, (_, i) => benchJob(i).name);

    // Check the answers before timing them: the whole namespace is in the cache, the filters match.
    const all = (await (await fetch(`${c.url}/api/v1/namespaces/${NS}/jobs?limit=1`, { headers })).json()) as { total: number };
    if (all.total !== CONSOLE_BENCH_JOBS) throw new Error(`the console lists ${all.total} jobs, not ${CONSOLE_BENCH_JOBS}`);
    const matches: Record<string, number> = {};
    for (const filter of Object.values(LIST_FILTERS)) {
      const check = await fetch(`${c.url}${listPath(filter)}`, { headers });
      const page = (await check.json()) as { total: number; items: unknown[] };
      if (check.status !== 200 || page.items.length !== 50) throw new Error(`unexpected list answer for ${filter}: ${check.status}, ${page.items?.length} items of ${page.total}`);
      matches[filter] = page.total;
    }
    const detail = await fetch(`${c.url}/api/v1/namespaces/${NS}/jobs/${names[1]}`, { headers });
    if (detail.status !== 200) throw new Error(`unexpected detail answer: ${detail.status} ${await detail.text()}`);

    // The idle baseline: what ZooKeeper receives over the same time with no request (the console's pings).
    const i0 = await counters(server, c);
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const i1 = await counters(server, c);
    const idle = { zkPackets: i1.packets - i0.packets, consoleSessionPackets: delta(i0.session, i1.session) };
    const idleRate = idle.zkPackets / (i1.at - i0.at);
    const loaded = procStats(c.process.pid);

    const rows: ConsoleRouteRow[] = [];
    for (const route of ['list-cursor', 'list-name', 'list-group', 'detail'] as const) {
      const requests = routeRequests(route, names, route === 'detail' || route === 'list-cursor' ? names.length : matches[LIST_FILTERS[route === 'list-name' ? 'name' : 'group']]!);
      await autocannon({ url: c.url, connections: CONSOLE_BENCH_CONNECTIONS, duration: WARMUP_SECONDS, headers, requests });
      const a = await counters(server, c);
      const r = await autocannon({ url: c.url, connections: CONSOLE_BENCH_CONNECTIONS, duration: seconds, headers, requests });
      const b = await counters(server, c);
      const zkPackets = b.packets - a.packets;
      rows.push({
        route: route === 'detail' ? 'detail: a different job each request' : route === 'list-cursor' ? 'list: page of 50 after a cursor, no filter, a different page each request' : `list: page of 50, ${LIST_FILTERS[route === 'list-name' ? 'name' : 'group']} (${matches[LIST_FILTERS[route === 'list-name' ? 'name' : 'group']]} match), a different offset each request`,
        p50: r.latency.p50,
        p99: r.latency.p99,
        max: r.latency.max,
        requestsPerSecond: r.requests.average,
        requests: r.requests.total,
        failed: r.non2xx + r.errors + r.timeouts,
        zkPackets,
        consoleSessionPackets: delta(a.session, b.session),
        zkRequestsPerGet: Math.max(0, zkPackets - idleRate * (b.at - a.at)) / r.requests.total,
        consoleCpuPercent: ((b.cpuTicks - a.cpuTicks) / TICKS_PER_SECOND / ((b.at - a.at) / 1000)) * 100,
      });
    }
    if (cpuProfileDir) {
      c.process.kill('SIGUSR2');
      await eventually(() => { if (!existsSync(`${cpuProfileDir}/${CPU_PROFILE_FILE}`)) throw new Error('no profile yet'); }, { timeoutMs: 30_000 });
    }
    // Settled: after the load, once V8 has had the time to return its garbage.
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const after = procStats(c.process.pid);
    // A failure here (no display libraries, a page change) must not lose the figures above.
    const ui = await measureJobsPage(c.url, NS, 'admin', ADMIN_PASSWORD).catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }));
    return {
      jobs: CONSOLE_BENCH_JOBS,
      nodes,
      writeSeconds,
      consoleStartSeconds: c.startSeconds,
      seconds,
      warmupSeconds: WARMUP_SECONDS,
      idle,
      rows,
      rss: { loadedMb: loaded.rssMb, afterMb: after.rssMb, peakMb: after.peakRssMb },
      ui,
    };
  } finally {
    await started?.process.stop(10_000);
    await zk?.close();
    await server.stop();
  }
}
