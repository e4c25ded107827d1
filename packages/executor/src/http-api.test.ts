import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpApp, createMetrics, type HttpApp } from '@orrery/core';
import { createHistory, type History, type RunRecord } from './history.js';
import { checkBearer, parseRange, runsRoutes, sliceLog, startExecutorHttp, type RangeRequest } from './http-api.js';

const TOKEN = 'the-cluster-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const T0 = Date.parse('2026-03-01T00:00:00Z');
const LOG = 'line 1\nline 2\nline 3\n'; // 21 bytes

const record = (job: string, startedAt: number): RunRecord => ({
  job, item: 0, trigger: 'cron', recorded: true, status: 'succeeded', exitCode: 0, startedAt, endedAt: startedAt + 5, durationMs: 5,
  executor: 'e', runId: `${startedAt.toString(36)}-0-abc`, fireTime: startedAt, attempt: 1, fencingToken: 1, message: '', stdoutTail: '', stderrTail: '',
});

/** A real history in a temporary folder: job `a` with three runs, the newest with a stdout log. */
async function makeHistory(): Promise<{ history: History; runId: string }> {
  const history = createHistory({ dataDir: mkdtempSync(join(tmpdir(), 'http-api-')) });
  for (let i = 0; i < 3; i += 1) await history.save(record('a', T0 + i * 1000));
  const runId = record('a', T0 + 2000).runId;
  writeFileSync(history.logPath(runId, 'stdout')!, LOG);
  return { history, runId };
}

const apps: HttpApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});
function app(history: History, clusterToken: string | undefined): HttpApp {
  const a = createHttpApp({ metrics: createMetrics(), health: () => ({ ok: true }), routes: runsRoutes({ history, clusterToken }) });
  apps.push(a);
  return a;
}

describe('checkBearer', () => {
  it.each([
    [`Bearer ${TOKEN}`, 'ok'], [`bearer ${TOKEN}`, 'ok'], [`BEARER ${TOKEN}`, 'ok'], [`bEaReR  ${TOKEN} `, 'ok'],
    [undefined, 'missing'], ['', 'missing'], ['   ', 'missing'],
    [`Basic ${TOKEN}`, 'scheme'], ['Bearer', 'scheme'], [TOKEN, 'scheme'], [`Bearer ${TOKEN} extra`, 'scheme'], [`Bearer${TOKEN}`, 'scheme'],
    ['Bearer wrong', 'wrong'], [`Bearer ${TOKEN}x`, 'wrong'], [`Bearer ${TOKEN.slice(0, -1)}`, 'wrong'], [`Bearer ${TOKEN.toUpperCase()}`, 'wrong'],
  ] as const)('%j is %s', (header, want) => {
    expect(checkBearer(header, TOKEN)).toBe(want);
  });

  it('is off without a token, whatever is sent', () => {
    expect(checkBearer(`Bearer ${TOKEN}`, undefined)).toBe('off');
    expect(checkBearer('Bearer ', '')).toBe('off');
  });
});

describe('parseRange and sliceLog (RFC 9110 §14)', () => {
  it.each<[string | undefined, RangeRequest['kind'], string?]>([
    [undefined, 'none'], ['bytes=0-4', 'from'], ['bytes=5-', 'from'], ['bytes=-3', 'suffix'], ['BYTES=1-2', 'from'], ['bytes = 1-2', 'from'],
    ['bytes=1-2,', 'from'], ['items=0-5', 'none'], ['x-custom=whatever', 'none'],
    ['', 'invalid', 'syntax'], ['bytes', 'invalid', 'syntax'], ['bytes=', 'invalid', 'syntax'], ['bytes=a-b', 'invalid', 'syntax'],
    ['bytes=--1', 'invalid', 'syntax'], ['bytes=1.5-2', 'invalid', 'syntax'], ['bytes=-', 'invalid', 'syntax'], ['bytes=0x1-', 'invalid', 'syntax'],
    ['bytes=5-2', 'invalid', 'last-before-first'], ['bytes=0-1,3-4', 'invalid', 'one-range'], ['bytes=0-1, bytes=2-3', 'invalid', 'one-range'],
    ['=0-1', 'invalid', 'syntax'], ['garbage', 'invalid', 'syntax'],
  ])('%j is %s %s', (header, kind, rule) => {
    const parsed = parseRange(header);
    expect(parsed.kind).toBe(kind);
    if (rule) expect(parsed).toMatchObject({ rule });
  });

  it.each<[RangeRequest, number, number, ReturnType<typeof sliceLog>]>([
    [{ kind: 'none' }, 10, 0, { status: 200, start: 0, end: 9 }],
    [{ kind: 'none' }, 10, 4, { status: 200, start: 4, end: 9 }],
    [{ kind: 'none' }, 10, 50, { status: 200, start: 10, end: 9 }],
    [{ kind: 'none' }, 0, 0, { status: 200, start: 0, end: -1 }],
    [{ kind: 'from', first: 2, last: 4 }, 10, 0, { status: 206, start: 2, end: 4 }],
    [{ kind: 'from', first: 2, last: 400 }, 10, 0, { status: 206, start: 2, end: 9 }],
    [{ kind: 'from', first: 9, last: undefined }, 10, 0, { status: 206, start: 9, end: 9 }],
    [{ kind: 'from', first: 10, last: undefined }, 10, 0, { status: 416 }],
    [{ kind: 'from', first: 1e30, last: undefined }, 10, 0, { status: 416 }],
    [{ kind: 'from', first: 0, last: undefined }, 0, 0, { status: 416 }],
    [{ kind: 'suffix', length: 3 }, 10, 0, { status: 206, start: 7, end: 9 }],
    [{ kind: 'suffix', length: 300 }, 10, 0, { status: 206, start: 0, end: 9 }],
    [{ kind: 'suffix', length: 0 }, 10, 0, { status: 416 }],
    [{ kind: 'suffix', length: 5 }, 0, 0, { status: 200, start: 0, end: -1 }],
  ])('%j of %i bytes from %i: %j', (range, size, offset, want) => {
    expect(sliceLog(size, range, offset)).toEqual(want);
  });
});

describe('the /runs routes', () => {
  it('answers only with the cluster token (any case of Bearer), 401 with WWW-Authenticate otherwise', async () => {
    const { history } = await makeHistory();
    const a = app(history, TOKEN);
    for (const authorization of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER ${TOKEN}`]) {
      expect((await a.inject({ url: '/runs?job=a', headers: { authorization } })).statusCode, authorization).toBe(200);
    }
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: `Basic ${TOKEN}` }, { authorization: '' }]) {
      const res = await a.inject({ url: '/runs?job=a&limit=oops', headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(401); // before any validation
      expect(res.headers['www-authenticate']).toBe('Bearer realm="orrery"');
      expect(res.json()).toMatchObject({ code: 'no-auth', message: expect.stringContaining('Authorization: Bearer') });
    }
  });

  it('is off without a cluster token, saying so, on every /runs route', async () => {
    const { history, runId } = await makeHistory();
    const a = app(history, undefined);
    for (const url of ['/runs?job=a', '/runs/summary?since=0', `/runs/${runId}`, `/runs/${runId}/log`]) {
      const res = await a.inject({ url, headers: AUTH });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ code: 'not-found', message: expect.stringContaining('run history is off on this executor'), details: { reason: 'history-off' } });
    }
    expect((await a.inject({ url: '/healthz' })).statusCode).toBe(200);
  });

  it('lists runs newest first, finds one, and 404s what is not a route or not a run', async () => {
    const { history, runId } = await makeHistory();
    const a = app(history, TOKEN);
    const list = (await a.inject({ url: '/runs?job=a', headers: AUTH })).json() as RunRecord[];
    expect(list.map((r) => r.startedAt)).toEqual([T0 + 2000, T0 + 1000, T0]);
    expect((await a.inject({ url: '/runs?job=a&limit=1', headers: AUTH })).json()).toHaveLength(1);
    expect((await a.inject({ url: '/runs?job=nobody', headers: AUTH })).json()).toEqual([]);
    expect((await a.inject({ url: `/runs/${runId}`, headers: AUTH })).json()).toMatchObject({ runId, job: 'a' });
    const missing = await a.inject({ url: '/runs/zzz-0-abc', headers: AUTH });
    expect([missing.statusCode, missing.json()]).toEqual([404, { code: 'not-found', message: "no run 'zzz-0-abc' on this executor", details: { runId: 'zzz-0-abc' } }]);
    for (const url of ['/runsfoo', `/runs/${runId}/logs`, `/runs/${runId}/log/x`, '/run']) {
      const res = await a.inject({ url, headers: AUTH });
      expect([res.statusCode, res.json().code], url).toEqual([404, 'not-found']);
    }
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const) {
      expect((await a.inject({ method, url: '/runs?job=a', headers: AUTH })).statusCode, method).toBe(404);
    }
  });

  it('answers HEAD wherever GET answers, with the same headers and no body', async () => {
    const { history, runId } = await makeHistory();
    const a = app(history, TOKEN);
    for (const url of ['/runs?job=a', '/runs/summary?since=0', `/runs/${runId}`, `/runs/${runId}/log`, `/runs/${runId}/log?offset=7`, '/healthz', '/metrics']) {
      const get = await a.inject({ url, headers: AUTH });
      const head = await a.inject({ method: 'HEAD', url, headers: AUTH });
      expect([head.statusCode, head.body], url).toEqual([get.statusCode, '']);
      if (url !== '/metrics') expect(head.headers['content-length'], url).toBe(get.headers['content-length']); // CPU time moves
    }
    const range = await a.inject({ method: 'HEAD', url: `/runs/${runId}/log`, headers: { ...AUTH, range: 'bytes=-7' } });
    expect([range.statusCode, range.headers['content-range'], range.body]).toEqual([206, 'bytes 14-20/21', '']);
  });

  it.each([
    ['/runs', 'job', 'required'],
    ['/runs?job=', 'job', 'pattern'],
    ['/runs?job=a/b', 'job', 'pattern'],
    ['/runs?job=a&job=b', 'job', 'type'],
    ['/runs?job=a&limit=0', 'limit', 'minimum'],
    ['/runs?job=a&limit=1001', 'limit', 'maximum'],
    ['/runs?job=a&limit=-1', 'limit', 'minimum'],
    ['/runs?job=a&limit=1.5', 'limit', 'type'],
    ['/runs?job=a&limit=NaN', 'limit', 'type'],
    ['/runs?job=a&limit=', 'limit', 'type'],
    ['/runs?job=a&limit=1&limit=2', 'limit', 'type'],
    ['/runs?job=a&offset=1', 'offset', 'unknown-field'],
    ['/runs/RUN-1', 'runId', 'pattern'],
    ['/runs/', 'runId', 'pattern'],
    ['/runs/.hidden-1', 'runId', 'pattern'],
    ['/runs/a%2F..%2Fb-1', 'runId', 'pattern'],
    ['/runs/a%00-1', 'runId', 'pattern'],
    [`/runs/${'a'.repeat(60)}-${'1'.repeat(10)}`, 'runId', 'maxLength'],
    ['/runs/aaa-1?x=1', 'x', 'unknown-field'],
    ['/runs/aaa-1/log?stream=both', 'stream', 'enum'],
    ['/runs/aaa-1/log?offset=-1', 'offset', 'minimum'],
    ['/runs/aaa-1/log?offset=1.5', 'offset', 'type'],
    ['/runs/aaa-1/log?offset=1e400', 'offset', 'type'],
    ['/runs/aaa-1/log?offset=99999999999999999999', 'offset', 'maximum'],
    ['/runs/aaa-1/log?offset=abc', 'offset', 'type'],
    ['/runs/aaa-1/log?offset=Infinity', 'offset', 'type'],
    ['/runs/aaa-1/log?offset=0x10', 'offset', 'type'],
    ['/runs/aaa-1/log?offset=%205', 'offset', 'type'],
    ['/runs/aaa-1/log?offset=', 'offset', 'type'],
    ['/runs?job=a&limit=1e400', 'limit', 'type'],
    ['/runs/summary', 'since', 'required'],
    ['/runs/summary?since=', 'since', 'type'],
    ['/runs/summary?since=-1', 'since', 'minimum'],
    ['/runs/summary?since=1.5', 'since', 'type'],
    ['/runs/summary?since=1e3', 'since', 'type'],
    ['/runs/summary?since=0x10', 'since', 'type'],
    ['/runs/summary?since=%201', 'since', 'type'],
    ['/runs/summary?since=yesterday', 'since', 'type'],
    ['/runs/summary?since=99999999999999999999', 'since', 'maximum'],
    ['/runs/summary?since=1&since=2', 'since', 'type'],
    ['/runs/summary?since=1&job=a', 'job', 'unknown-field'],
  ])('%s is a 400 naming %s and %s', async (url, field, rule) => {
    const { history } = await makeHistory();
    const res = await app(history, TOKEN).inject({ url, headers: AUTH });
    expect(res.statusCode).toBe(400);
    const body = res.json() as { code: string; message: string; details: { issues: Array<{ field: string; rule: string; message: string }> } };
    expect(body.code).toBe('validation');
    expect(body.details.issues).toContainEqual({ field, rule, message: expect.stringContaining(field) });
    expect(body.message).toContain(`(${rule})`);
  });

  it('serves a log whole, from an offset, or one range; 416 and 400 as RFC 9110 says', async () => {
    const { history, runId } = await makeHistory();
    const a = app(history, TOKEN);
    const log = (query = '', headers: Record<string, string> = {}) => a.inject({ url: `/runs/${runId}/log${query}`, headers: { ...AUTH, ...headers } });
    const whole = await log();
    expect([whole.statusCode, whole.body, whole.headers['x-log-size'], whole.headers['accept-ranges']]).toEqual([200, LOG, '21', 'bytes']);
    expect((await log('?offset=7')).body).toBe('line 2\nline 3\n');
    expect((await log('?offset=21')).body).toBe('');
    expect((await log('?offset=500')).body).toBe('');
    const tail = await log('', { range: 'bytes=-7' });
    expect([tail.statusCode, tail.body, tail.headers['content-range']]).toEqual([206, 'line 3\n', 'bytes 14-20/21']);
    expect((await log('', { range: 'bytes=0-5' })).body).toBe('line 1');
    expect((await log('', { range: 'bytes=7-' })).body).toBe('line 2\nline 3\n');
    expect((await log('', { range: 'bytes=20-999' })).body).toBe('\n');
    expect((await log('', { range: 'items=0-1' })).statusCode).toBe(200); // an unknown unit is ignored
    for (const range of ['bytes=21-', 'bytes=-0', 'bytes=99999999999999999999999-']) {
      const res = await log('', { range });
      expect([res.statusCode, res.headers['content-range'], res.body], range).toEqual([416, 'bytes */21', '']);
    }
    for (const [range, rule] of [['bytes=5-2', 'last-before-first'], ['bytes=0-1,4-5', 'one-range'], ['bytes=x', 'syntax'], ['lines', 'syntax']]) {
      const res = await log('', { range: range! });
      expect([res.statusCode, res.json().details.issues[0].rule], range).toEqual([400, rule]);
    }
    const both = await log('?offset=1', { range: 'bytes=0-1' });
    expect([both.statusCode, both.json().details.issues[0]]).toEqual([400, expect.objectContaining({ field: 'offset', rule: 'not-with-range' })]);
  });

  it('serves a stream the run never wrote to as empty, and a log whose run was pruned as a 404', async () => {
    const { history, runId } = await makeHistory();
    const a = app(history, TOKEN);
    const stderr = await a.inject({ url: `/runs/${runId}/log?stream=stderr`, headers: AUTH });
    expect([stderr.statusCode, stderr.body, stderr.headers['x-log-size']]).toEqual([200, '', '0']);
    expect((await a.inject({ url: `/runs/${runId}/log?stream=stderr`, headers: { ...AUTH, range: 'bytes=0-' } })).statusCode).toBe(416);
    // Pruned between the record check and the open: the history still says yes once, the files are gone.
    const path = history.logPath(runId, 'stdout')!;
    let checks = 0;
    const racing: History = {
      ...history,
      get: (id) => (checks++ === 0 ? history.get(id) : undefined),
      logPath: (id, stream) => {
        const p = history.logPath(id, stream);
        rmSync(path, { force: true });
        rmSync(path.replace(/\.stdout\.log$/, '.json'), { force: true });
        return p;
      },
    };
    const res = await app(racing, TOKEN).inject({ url: `/runs/${runId}/log`, headers: AUTH });
    expect([res.statusCode, res.json().code]).toEqual([404, 'not-found']);
  });

  it('lists runs started before ?before=, and serves the log of a run in progress (logs, no record yet)', async () => {
    const { history } = await makeHistory();
    const a = app(history, TOKEN);
    const listed = await a.inject({ url: `/runs?job=a&before=${T0 + 2000}`, headers: AUTH });
    expect(listed.json().map((r: RunRecord) => r.startedAt)).toEqual([T0 + 1000, T0]);
    const running = `${(T0 + 9000).toString(36)}-0-def`;
    writeFileSync(history.logPaths('a', running).stdout, 'partial\n');
    const log = await a.inject({ url: `/runs/${running}/log`, headers: AUTH });
    expect([log.statusCode, log.body]).toEqual([200, 'partial\n']);
    const noStderrYet = await a.inject({ url: `/runs/${running}/log?stream=stderr`, headers: AUTH });
    expect([noStderrYet.statusCode, noStderrYet.headers['x-log-size']]).toEqual([200, '0']);
    expect((await a.inject({ url: `/runs/${running}`, headers: AUTH })).statusCode).toBe(404); // no record yet
  });

  it('summarises the runs that ended at or after ?since= per job, with the token only (401 before validation)', async () => {
    const history = createHistory({ dataDir: mkdtempSync(join(tmpdir(), 'http-api-')) });
    const now = Date.now();
    const at = (job: string, startedAt: number, status: RunRecord['status']): RunRecord => ({ ...record(job, startedAt), status, endedAt: startedAt + 5 });
    const runs = [at('a', now - 90_000, 'succeeded'), at('a', now - 60_000, 'failed'), at('a', now - 30_000, 'succeeded'), at('b', now - 20_000, 'timed-out'), at('b', now - 10_000, 'aborted')];
    for (const r of runs) await history.save(r);
    const a = app(history, TOKEN);
    const res = await a.inject({ url: `/runs/summary?since=${now - 70_000}`, headers: AUTH });
    expect([res.statusCode, res.json()]).toEqual([200, {
      since: now - 70_000,
      jobs: [
        { job: 'a', runs: 2, failures: 1, timedOut: 0, lastFailureAt: runs[1]!.endedAt },
        { job: 'b', runs: 2, failures: 1, timedOut: 1, lastFailureAt: runs[3]!.endedAt },
      ],
    }]);
    expect((await a.inject({ url: '/runs/summary?since=0', headers: AUTH })).json().jobs.map((j: { runs: number }) => j.runs)).toEqual([3, 2]);
    expect((await a.inject({ url: `/runs/summary?since=${now}`, headers: AUTH })).json()).toEqual({ since: now, jobs: [] });
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: `Basic ${TOKEN}` }]) {
      const refused = await a.inject({ url: '/runs/summary?since=oops', headers });
      expect([refused.statusCode, refused.json().code], JSON.stringify(headers)).toEqual([401, 'no-auth']);
      expect(refused.body).not.toContain('"jobs"');
    }
  });

  it('answers whatever the history throws with a generic 500 JSON', async () => {
    const { history, runId } = await makeHistory();
    const broken: History = {
      ...history,
      list: () => { throw new Error('EIO: /data/secret'); },
      summary: () => Promise.reject(new Error('EIO: /data/secret')),
      get: () => { throw new TypeError("Cannot read properties of undefined (reading 'runId')"); },
      logPath: () => { throw new TypeError("Cannot read properties of undefined (reading 'runId')"); },
    };
    const a = app(broken, TOKEN);
    for (const url of ['/runs?job=a', '/runs/summary?since=0', `/runs/${runId}`, `/runs/${runId}/log`]) {
      const res = await a.inject({ url, headers: AUTH });
      expect(res.statusCode, url).toBe(500);
      expect(res.json()).toEqual({ code: 'internal', message: expect.stringMatching(/^internal error/) });
      expect(res.body).not.toMatch(/secret|runId|\bat /);
    }
  });
});

describe('startExecutorHttp', () => {
  it('listens on 127.0.0.1 by default and streams a log over a real socket', async () => {
    const { history, runId } = await makeHistory();
    const http = await startExecutorHttp({ port: 0, metrics: createMetrics(), history, clusterToken: TOKEN, health: () => ({ ok: true }) });
    try {
      const res = await fetch(`http://127.0.0.1:${http.port}/runs/${runId}/log`, { headers: AUTH });
      expect([res.status, await res.text()]).toEqual([200, LOG]);
      const tail = await fetch(`http://127.0.0.1:${http.port}/runs/${runId}/log`, { headers: { ...AUTH, range: 'bytes=-7' } });
      expect([tail.status, await tail.text()]).toEqual([206, 'line 3\n']);
    } finally {
      await http.close();
    }
  });
});
