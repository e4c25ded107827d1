// The pure core of the runs store: the merge of several executors' answers (order, limit, before,
// ties, the horizon of full answers, a record over its in-progress entry), Range parsing, and the
// validation of what an executor sends; the run summaries checked, summed, and fetched from
// stand-in executors on real sockets that answer well, refuse, or answer nonsense.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkRunSummary,
  fetchRunSummaries,
  formatByteRange,
  mergeRuns,
  parseByteRange,
  sumRunSummaries,
  toRunView,
  type RunExecutor,
  type RunView,
  type RunsAnswer,
} from './runs.js';

const run = (runId: string, startedAt: number, extra: Partial<RunView> = {}): RunView => ({
  runId, job: 'j', item: 0, executor: 'e1', status: 'succeeded', startedAt, endedAt: startedAt + 10, durationMs: 10, exitCode: 0,
  fireTime: startedAt, attempt: 1, trigger: 'cron', message: '', recorded: true, ...extra,
});
const ids = (runs: RunView[]) => runs.map((r) => r.runId);
const answer = (runs: RunView[], full = false): RunsAnswer => ({ runs, full });

describe('mergeRuns', () => {
  const table: Array<{ name: string; answers: RunsAnswer[]; limit: number; before?: number; runs: string[]; nextBefore: number | null }> = [
    { name: 'interleaves two executors, newest first', answers: [answer([run('a3', 30), run('a1', 10)]), answer([run('b4', 40), run('b2', 20)])], limit: 10, runs: ['b4', 'a3', 'b2', 'a1'], nextBefore: null },
    { name: 'cuts at the limit and gives the cursor', answers: [answer([run('a3', 30), run('a1', 10)]), answer([run('b4', 40), run('b2', 20)])], limit: 2, runs: ['b4', 'a3'], nextBefore: 30 },
    { name: 'before: only runs started strictly before it', answers: [answer([run('a3', 30), run('a1', 10)]), answer([run('b4', 40), run('b2', 20)])], limit: 2, before: 30, runs: ['b2', 'a1'], nextBefore: null },
    { name: 'a page keeps every run of the last millisecond', answers: [answer([run('a2', 20), run('a1', 10)]), answer([run('b2', 20)])], limit: 1, runs: ['b2', 'a2'], nextBefore: 20 },
    { name: 'ties are ordered by run id, descending', answers: [answer([run('x1', 5), run('x3', 5), run('x2', 5)])], limit: 10, runs: ['x3', 'x2', 'x1'], nextBefore: null },
    { name: 'a full answer sets a horizon: nothing older than its oldest run is listed', answers: [answer([run('a5', 50), run('a4', 40)], true), answer([run('b45', 45), run('b10', 10)])], limit: 10, runs: ['a5', 'b45'], nextBefore: 41 },
    { name: 'a finished record wins over its in-progress entry', answers: [answer([run('r1', 10, { status: 'running', endedAt: null })]), answer([run('r1', 10)])], limit: 10, runs: ['r1'], nextBefore: null },
    { name: 'no answers, no runs', answers: [], limit: 5, runs: [], nextBefore: null },
  ];
  it.each(table)('$name', ({ answers, limit, before, runs, nextBefore }) => {
    const page = mergeRuns(answers, { limit, before });
    expect(ids(page.runs)).toEqual(runs);
    expect(page.nextBefore).toBe(nextBefore);
  });

  it('pages through every run exactly once by following nextBefore', () => {
    const a = Array.from({ length: 23 }, (_, i) => run(`a${String(i).padStart(2, '0')}`, 1000 + i * 7));
    const b = Array.from({ length: 17 }, (_, i) => run(`b${String(i).padStart(2, '0')}`, 1000 + i * 11));
    const seen: string[] = [];
    let before: number | undefined;
    for (let page = 0; page < 50; page += 1) {
      const p = mergeRuns([answer(a.filter((r) => before === undefined || r.startedAt < before)), answer(b.filter((r) => before === undefined || r.startedAt < before))], { limit: 4, before });
      seen.push(...ids(p.runs));
      if (p.nextBefore === null) break;
      before = p.nextBefore;
    }
    expect(seen).toEqual(ids([...a, ...b].sort((x, y) => y.startedAt - x.startedAt || (x.runId < y.runId ? 1 : -1))));
    expect(new Set(seen).size).toBe(40);
  });

  it('the status of a finished record keeps the in-progress entry out whichever answer comes first', () => {
    const page = mergeRuns([answer([run('r1', 10)]), answer([run('r1', 10, { status: 'running' })])], { limit: 5 });
    expect(page.runs.map((r) => r.status)).toEqual(['succeeded']);
  });
});

describe('parseByteRange', () => {
  it.each([
    ['bytes=0-99', { kind: 'from', first: 0, last: 99 }],
    ['bytes=100-', { kind: 'from', first: 100 }],
    ['bytes=-50', { kind: 'suffix', length: 50 }],
    ['items=0-5', undefined],
  ])('%s', (header, expected) => {
    expect(parseByteRange(header)).toEqual(expected);
  });
  it.each(['bytes=5-1', 'bytes=0-1,5-6', 'bytes=abc', 'bytes=', 'nonsense', `bytes=0-${'9'.repeat(30)}`])('refuses %s with a validation error naming range', (header) => {
    let error: unknown;
    try {
      parseByteRange(header);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'validation', details: { issues: [expect.objectContaining({ field: 'range' })] } });
  });
  it('re-serialises what it parsed', () => {
    for (const h of ['bytes=0-99', 'bytes=100-', 'bytes=-50']) expect(formatByteRange(parseByteRange(h)!)).toBe(h);
  });
});

describe('toRunView', () => {
  const record = { runId: 'lx2k3-0-ab12', job: 'j', item: 0, executor: 'e1', status: 'failed', startedAt: 5, endedAt: 9, durationMs: 4, exitCode: 1, fireTime: 5, attempt: 1, fencingToken: 3, message: 'boom', trigger: 'cron', recorded: true };
  it('keeps the fields it knows and drops the rest', () => {
    expect(toRunView({ ...record, extra: 'x' }, 'j')).toEqual({ runId: 'lx2k3-0-ab12', job: 'j', item: 0, executor: 'e1', status: 'failed', startedAt: 5, endedAt: 9, durationMs: 4, exitCode: 1, fireTime: 5, attempt: 1, trigger: 'cron', message: 'boom', recorded: true });
  });
  it.each([
    ['another job', { ...record, job: 'k' }],
    ['a bad status', { ...record, status: 'exploded' }],
    ['a run id with a slash', { ...record, runId: '../etc' }],
    ['a string start', { ...record, startedAt: '5' }],
    ['not an object', 'hello'],
    ['null', null],
  ])('refuses %s', (_name, input) => {
    expect(toRunView(input, 'j')).toBeUndefined();
  });
});

describe('checkRunSummary and sumRunSummaries', () => {
  const job = (name: string, runs: number, failures = 0, timedOut = 0, lastFailureAt: number | null = failures > 0 ? 100 : null) => ({ job: name, runs, failures, timedOut, lastFailureAt });
  it.each<[string, unknown, string | undefined]>([
    ['a summary', { since: 10, jobs: [job('a', 3, 1, 1), job('b', 2)] }, undefined],
    ['no jobs', { since: 10, jobs: [] }, undefined],
    ['extra fields (ignored)', { since: 10, jobs: [{ ...job('a', 1), extra: true }], version: 2 }, undefined],
    ['another since', { since: 11, jobs: [] }, 'a summary since 11, not since 10'],
    ['a list', [job('a', 1)], 'something that is not a run summary'],
    ['null', null, 'something that is not a run summary'],
    ['a negative count', { since: 10, jobs: [job('a', -1)] }, 'something that is not a run summary'],
    ['a fractional count', { since: 10, jobs: [job('a', 1.5)] }, 'something that is not a run summary'],
    ['an absurd count', { since: 10, jobs: [job('a', 1e12)] }, 'something that is not a run summary'],
    ['a job name that is not one', { since: 10, jobs: [job('../etc', 1)] }, 'something that is not a run summary'],
    ['a string count', { since: 10, jobs: [{ ...job('a', 1), runs: '1' }] }, 'something that is not a run summary'],
    ['a job twice', { since: 10, jobs: [job('a', 1), job('a', 2)] }, "job 'a' twice"],
    ['more failures than runs', { since: 10, jobs: [job('a', 1, 2)] }, "impossible counts for job 'a'"],
    ['more time-outs than failures', { since: 10, jobs: [job('a', 3, 1, 2)] }, "impossible counts for job 'a'"],
    ['a last failure without failures', { since: 10, jobs: [job('a', 3, 0, 0, 5)] }, "a last failure that does not match the failures of job 'a'"],
    ['failures without a last failure', { since: 10, jobs: [job('a', 3, 1, 0, null)] }, "a last failure that does not match the failures of job 'a'"],
    ['a last failure before the window', { since: 10, jobs: [job('a', 3, 1, 0, 9)] }, "a last failure of job 'a' outside the window"],
    ['a last failure far in the future', { since: 10, jobs: [job('a', 3, 1, 0, 1000 + 5 * 60_000 + 1)] }, "a last failure of job 'a' outside the window"],
    ['a last failure a little in the future (clock skew)', { since: 10, jobs: [job('a', 3, 1, 0, 1000 + 60_000)] }, undefined],
  ])('%s', (_name, input, problem) => {
    const checked = checkRunSummary(input, 10, 1000);
    expect(checked.ok ? undefined : checked.problem).toBe(problem);
  });

  it('sums runs, failures and time-outs per job over the executors, keeps the latest failure, jobs in name order', () => {
    const sums = sumRunSummaries([
      { executor: 'e1', jobs: [job('b', 3, 1, 0, 50), job('a', 1)] },
      { executor: 'e2', jobs: [job('b', 4, 2, 1, 70)] },
      { executor: 'e3', jobs: [job('b', 1, 1, 1, 60), job('c', 2)] },
      { executor: 'e4', jobs: [] },
    ]);
    expect([...sums]).toEqual([
      ['a', { runs: 1, failures: 0, timedOut: 0, lastFailureAt: null }],
      ['b', { runs: 8, failures: 4, timedOut: 2, lastFailureAt: 70 }],
      ['c', { runs: 2, failures: 0, timedOut: 0, lastFailureAt: null }],
    ]);
    expect(sumRunSummaries([])).toEqual(new Map());
  });
});

describe('fetchRunSummaries (stand-in executors on real sockets)', () => {
  const TOKEN = 'summary-token';
  const servers: Server[] = [];
  const asked: Array<{ url: string; authorization: string | undefined }> = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });
  const json = (status: number, body: unknown) => (res: ServerResponse) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const kinds: Record<string, (since: number) => (res: ServerResponse) => void> = {
    good: (since) => json(200, { since, jobs: [{ job: 'a', runs: 3, failures: 1, timedOut: 0, lastFailureAt: since + 5 }] }),
    refuses: () => json(401, { code: 'no-auth', message: 'no' }),
    'history-off': () => json(404, { code: 'not-found', message: 'off', details: { reason: 'history-off' } }),
    older: () => json(400, { code: 'validation', message: 'runId: pattern' }),
    garbage: () => (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('<html>'),
    huge: (since) => json(200, { since, jobs: [], pad: 'x'.repeat(5000) }),
    silent: () => () => undefined, // never answers
  };
  async function standIn(kind: string): Promise<string> {
    const server = createServer((req, res) => {
      asked.push({ url: req.url ?? '', authorization: req.headers.authorization });
      kinds[kind]!(Number(new URL(req.url ?? '/', 'http://x').searchParams.get('since')))(res);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('asks every online executor with the token and since, and names each that could not answer, with the reason', async () => {
    const executors: RunExecutor[] = [
      ...await Promise.all(Object.keys(kinds).map(async (kind) => ({ name: `e-${kind}`, online: true, httpUrl: await standIn(kind) }))),
      { name: 'e-gone', online: false },
      { name: 'e-no-port', online: true },
    ];
    const directory = { executors: async () => executors, inProgress: async () => [] };
    const since = 1_700_000_000_000;
    const got = await fetchRunSummaries(directory, since, { clusterToken: TOKEN, timeoutMs: 300, maxAnswerBytes: 4096 });
    expect(got.summaries).toEqual([{ executor: 'e-good', jobs: [{ job: 'a', runs: 3, failures: 1, timedOut: 0, lastFailureAt: since + 5 }] }]);
    expect(got.unavailable.map((u) => [u.executor, u.reason])).toEqual([
      ['e-garbage', 'bad-answer'], ['e-gone', 'offline'], ['e-history-off', 'history-off'], ['e-huge', 'bad-answer'],
      ['e-no-port', 'no-http-api'], ['e-older', 'bad-answer'], ['e-refuses', 'refused'], ['e-silent', 'timeout'],
    ]);
    expect(got.unavailable.find((u) => u.executor === 'e-older')?.message).toContain('older than the run summary');
    expect(asked.every((a) => a.url === `/runs/summary?since=${since}` && a.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(asked).toHaveLength(Object.keys(kinds).length);
  });

  it('needs the cluster token and a non-negative integer since', async () => {
    const directory = { executors: async () => [], inProgress: async () => [] };
    await expect(fetchRunSummaries(directory, 0, { clusterToken: undefined })).rejects.toMatchObject({ code: 'unavailable', message: expect.stringContaining('ORRERY_CLUSTER_TOKEN') });
    for (const since of [-1, 1.5, Number.NaN]) {
      await expect(fetchRunSummaries(directory, since, { clusterToken: TOKEN })).rejects.toMatchObject({ code: 'validation', details: { issues: [expect.objectContaining({ field: 'since' })] } });
    }
    expect(await fetchRunSummaries(directory, 0, { clusterToken: TOKEN })).toEqual({ summaries: [], unavailable: [] });
  });
});
