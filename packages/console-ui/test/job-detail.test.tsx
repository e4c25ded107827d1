// The job detail page through the whole app (router, queries, the API client) against a fake API:
// the runs timeline (rows, order, the executor-change and failover marks, a click opens the run),
// the executors that did not answer, the shards table's unassigned advice, role checks on the
// actions, a finished run's log read in ranges, and a running run's log followed over a fake
// EventSource until it ends (run ended, executor offline).
import type { JobDetailAnswer, RunAnswer, RunsAnswer, ShardsAnswer } from '@orrery/console/api-types';
import { createMemoryHistory } from '@tanstack/react-router';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../src/app/App';
import type { Principal } from '../src/api/types';
import { LOG_PAGE_BYTES } from '../src/features/job-detail/queries';
import { answer, fakeApi, type Call } from './fake-api';

const OPERATOR: Principal = { user: 'olga', admin: false, roles: { shop: 'operator' }, via: 'session' };
const OWNER: Principal = { user: 'owen', admin: false, roles: { shop: 'owner' }, via: 'session' };
const VIEWER: Principal = { user: 'vic', admin: false, roles: { shop: 'viewer' }, via: 'session' };

const JOB = '/api/v1/namespaces/shop/jobs/report';
const NOW = Date.now();
const MIN = 60_000;

const DETAIL: JobDetailAnswer = {
  name: 'report',
  version: 7,
  config: {
    name: 'report', description: 'Nightly sales report', type: 'shell', command: './report.sh', cron: '0 */5 * * * *', timeZone: 'Asia/Shanghai',
    shardingTotalCount: 3, shardingItemParameters: {}, jobParameter: '', localMode: false, loadLevel: 1, preferList: [], useDispreferList: true,
    timeoutSeconds: 0, enabled: true, failover: true, pausePeriodDate: '', pausePeriodTime: '', overlap: 'skip',
    misfire: { policy: 'fire-once', thresholdSeconds: 5 }, retry: { count: 0, backoffSeconds: 0 }, downstream: [], groups: ['billing'],
    alarm: { onFailure: true, onTimeout: true },
  },
  assignment: { epoch: 4, items: { e1: [0], e2: [1] }, unassigned: [{ item: 2, reason: 'no-eligible-executor' }], writtenAt: NOW - 60 * MIN },
  summary: { running: 1, failing: 0, succeeded: 1, unreadable: 0 },
  nextFireTime: NOW + 5 * MIN,
};

const ADVICE = "no online executor of namespace 'shop' may take it: start an executor in this namespace, or check the job's preferList";
const SHARDS: ShardsAnswer = {
  job: 'report', enabled: true, timeZone: 'Asia/Shanghai', shardingTotalCount: 3, assignmentEpoch: 4,
  items: [
    { item: 0, state: 'succeeded', owner: 'e1', running: null, failoverPending: null, last: { status: 'succeeded', message: 'wrote 120 rows', runId: 'r2', executor: 'e2', startedAt: NOW - 30 * MIN, endedAt: NOW - 29 * MIN, durationMs: MIN, exitCode: 0 }, nextFire: { at: NOW + 5 * MIN, local: '', utc: new Date(NOW + 5 * MIN).toISOString(), timeZone: 'Asia/Shanghai' } },
    { item: 1, state: 'running', owner: 'e2', running: { runId: 'r4', executor: 'e2', since: NOW - 5 * MIN, attempt: 1 }, failoverPending: null, last: null, nextFire: null },
    { item: 2, state: 'unassigned', owner: null, running: null, failoverPending: null, last: null, nextFire: null, unassigned: { reason: 'no-eligible-executor', advice: ADVICE } },
  ],
};

function run(runId: string, item: number, executor: string, startMin: number, durationMin: number | null, extra: Partial<RunAnswer> = {}): RunAnswer {
  const startedAt = NOW - startMin * MIN;
  const running = durationMin === null;
  return {
    runId, job: 'report', item, executor, status: running ? 'running' : 'succeeded', startedAt,
    endedAt: running ? null : startedAt + durationMin * MIN, durationMs: running ? null : durationMin * MIN, exitCode: running ? null : 0,
    fireTime: startedAt, attempt: 1, trigger: running ? null : 'cron', message: '', recorded: running ? null : true, ...extra,
  };
}

// Item 0: r1 on e1, then r2 on e2 (an executor change). Item 1: r3 a failed failover re-run, r4 running now.
const RUNS: RunsAnswer = {
  runs: [
    run('r4', 1, 'e2', 5, null),
    run('r2', 0, 'e2', 30, 1),
    run('r3', 1, 'e2', 40, 2, { status: 'failed', trigger: 'failover', exitCode: 1, message: 'exit 1' }),
    run('r1', 0, 'e1', 50, 1),
  ],
  nextBefore: null,
  unavailable: [{ executor: 'e3', reason: 'offline', message: "executor 'e3' is offline" }],
};

/** Records `Range` headers of log requests and answers them from `logs` (runId/stream → text). */
function fakeLogs(logs: Record<string, string>) {
  const ranges: { path: string; range: string | null }[] = [];
  const inner = globalThis.fetch;
  vi.stubGlobal('fetch', async (input: string, init: RequestInit = {}) => {
    const url = new URL(input, 'http://console.test');
    const match = /\/runs\/([^/]+)\/log$/.exec(url.pathname);
    if (!match) return inner(input, init);
    const range = new Headers(init.headers).get('range');
    ranges.push({ path: `${url.pathname}?${url.searchParams}`, range });
    const bytes = new TextEncoder().encode(logs[`${match[1]}/${url.searchParams.get('stream') ?? 'stdout'}`] ?? '');
    const [, a, b] = /^bytes=(\d+)-(\d+)$/.exec(range ?? '') ?? [];
    const from = Number(a ?? 0);
    if (from >= bytes.length && bytes.length > 0) return new Response(null, { status: 416, headers: { 'content-range': `bytes */${bytes.length}`, 'x-log-size': String(bytes.length) } });
    const part = bytes.slice(from, Math.min(bytes.length, Number(b ?? bytes.length - 1) + 1));
    return new Response(part, { status: 206, headers: { 'content-range': `bytes ${from}-${from + part.length - 1}/${bytes.length}`, 'x-log-size': String(bytes.length) } });
  });
  return ranges;
}

/** A stand-in for the browser's EventSource: records each one; a test emits events on it. */
class FakeEventSource {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  static instances: FakeEventSource[] = [];
  readyState = FakeEventSource.OPEN;
  onerror: ((event: Event) => void) | null = null;
  private listeners = new Map<string, Set<(event: Event) => void>>();
  constructor(readonly url: string) {
    FakeEventSource.instances.push(this);
  }
  addEventListener(type: string, listener: (event: Event) => void) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type)!.add(listener);
  }
  removeEventListener(type: string, listener: (event: Event) => void) {
    this.listeners.get(type)?.delete(listener);
  }
  close() {
    this.readyState = FakeEventSource.CLOSED;
  }
  emit(type: string, data: unknown) {
    const event = new MessageEvent(type, { data: JSON.stringify(data) });
    act(() => {
      for (const listener of this.listeners.get(type) ?? []) listener(event);
    });
  }
  static logStreams() {
    return FakeEventSource.instances.filter((s) => s.url.includes('/log/stream'));
  }
}

beforeEach(() => {
  FakeEventSource.instances = [];
});

function renderPage(url: string, me: Principal, extra: Record<string, (call: Call) => unknown> = {}, logs: Record<string, string> = {}) {
  const api = fakeApi({
    'GET /api/v1/auth/me': () => me,
    'GET /api/v1/namespaces': () => ({ namespaces: [{ name: 'shop', version: 0, settings: null, jobs: 1, enabledJobs: 1, failingJobs: 0, executors: { online: 2, total: 3 } }] }),
    [`GET ${JOB}`]: () => DETAIL,
    [`GET ${JOB}/shards`]: () => SHARDS,
    [`GET ${JOB}/runs`]: () => RUNS,
    ...Object.fromEntries(RUNS.runs.map((r) => [`GET ${JOB}/runs/${r.runId}`, () => r])),
    ...extra,
  });
  const ranges = fakeLogs(logs);
  const history = createMemoryHistory({ initialEntries: [url] });
  render(<App history={history} locale="en" />);
  return { api, history, ranges };
}

const cellsOf = (row: HTMLElement) => within(row).queryAllByRole('button').map((b) => b.getAttribute('data-run-id'));

describe('the job detail page', () => {
  it('draws the runs timeline: a row per shard, runs in time order, executor changes and failover re-runs marked', async () => {
    renderPage('/ns/shop/jobs/report?tab=runs', OPERATOR);
    const timeline = await screen.findByRole('group', { name: 'Runs timeline: one row per shard, time across' });
    const rows = within(timeline).getAllByRole('group');
    expect(rows.map((r) => r.getAttribute('aria-label'))).toEqual(['Shard 0', 'Shard 1', 'Shard 2']);
    expect(cellsOf(rows[0]!)).toEqual(['r1', 'r2']);
    expect(cellsOf(rows[1]!)).toEqual(['r3', 'r4']);
    expect(cellsOf(rows[2]!)).toEqual([]);

    const [r1, r2] = within(rows[0]!).getAllByRole('button');
    expect(r2!.getAttribute('aria-label')).toMatch(/^Shard 0, .*: Succeeded, 1 min 00 s, on e2; executor changed from e1 to e2$/);
    expect(r2!.querySelector('[data-mark="executor"]')).not.toBeNull();
    expect(r1!.querySelector('[data-mark="executor"]')).toBeNull();
    const [r3, r4] = within(rows[1]!).getAllByRole('button');
    expect(r3!.getAttribute('aria-label')).toMatch(/Failed, 2 min 00 s, on e2; failover re-run$/);
    expect(r3!.querySelector('[data-mark="failover"]')).not.toBeNull();
    expect(r3!.querySelector('[data-mark="executor"]')).toBeNull();
    expect(r4!.getAttribute('aria-label')).toMatch(/Running/);
    // One cell is in the tab order (the newest run); the others are reached with the arrow keys.
    expect(within(timeline).getAllByRole('button').filter((b) => b.getAttribute('tabindex') === '0').map((b) => b.getAttribute('data-run-id'))).toEqual(['r4']);

    // The executor that did not answer is named, with why.
    expect(screen.getByText('Runs from 1 executor(s) are missing:')).toBeTruthy();
    expect(screen.getByText('e3').closest('li')!.textContent).toContain('offline');
    // The history table lists every run, newest first, the failover re-run tagged.
    const table = screen.getByRole('table');
    const lines = within(table).getAllByRole('row').slice(1);
    expect(lines.map((tr) => within(tr).getAllByRole('cell')[2]!.textContent)).toEqual(['e2', 'e2', 'e2', 'e1']);
    expect(within(lines[2]!).getByText('failover')).toBeTruthy();
  });

  it('opens a run from a timeline cell: the URL names it, the drawer shows it and its log', async () => {
    const { history, ranges } = renderPage('/ns/shop/jobs/report?tab=runs', OPERATOR, {}, { 'r2/stdout': 'wrote 120 rows\n', 'r2/stderr': 'warning: slow query\n' });
    const timeline = await screen.findByRole('group', { name: 'Runs timeline: one row per shard, time across' });
    const cell = within(timeline).getAllByRole('button').find((b) => b.getAttribute('data-run-id') === 'r2')!;
    fireEvent.click(cell);

    await waitFor(() => expect(new URLSearchParams(history.location.search).get('run')).toBe('r2'));
    expect(new URLSearchParams(history.location.search).get('executor')).toBe('e2');
    const drawer = await screen.findByRole('complementary', { name: 'Run of shard 0' });
    expect(cell.getAttribute('aria-current')).toBe('true');
    expect(await within(drawer).findByText('wrote 120 rows')).toBeTruthy();
    expect(ranges[0]).toEqual({ path: `${JOB}/runs/r2/log?stream=stdout&executor=e2`, range: `bytes=0-${LOG_PAGE_BYTES - 1}` });

    fireEvent.click(within(drawer).getByRole('tab', { name: 'stderr' }));
    expect(await within(drawer).findByText('warning: slow query')).toBeTruthy();

    // Escape closes it, and the URL forgets the run.
    fireEvent.keyDown(drawer, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByRole('complementary')).toBeNull());
    expect(new URLSearchParams(history.location.search).get('run')).toBeNull();
  });

  it('moves between timeline cells with the arrow keys and opens one with Enter', async () => {
    const { history } = renderPage('/ns/shop/jobs/report?tab=runs', OPERATOR);
    const timeline = await screen.findByRole('group', { name: 'Runs timeline: one row per shard, time across' });
    const byId = (id: string) => within(timeline).getAllByRole('button').find((b) => b.getAttribute('data-run-id') === id)!;
    byId('r4').focus();
    fireEvent.keyDown(byId('r4'), { key: 'ArrowLeft' });
    expect(document.activeElement).toBe(byId('r3'));
    fireEvent.keyDown(byId('r3'), { key: 'ArrowUp' });
    expect(document.activeElement?.getAttribute('data-run-id')).toMatch(/^r[12]$/);
    fireEvent.keyDown(document.activeElement!, { key: 'Enter' });
    await waitFor(() => expect(new URLSearchParams(history.location.search).get('run')).toMatch(/^r[12]$/));
  });

  it('reads a long log in ranges, with load more', async () => {
    const long = `${'a'.repeat(LOG_PAGE_BYTES - 1)}\nSECOND PART\n`;
    const { ranges } = renderPage('/ns/shop/jobs/report?tab=runs&run=r1&executor=e1', VIEWER, {}, { 'r1/stdout': long });
    const drawer = await screen.findByRole('complementary', { name: 'Run of shard 0' });
    const more = await within(drawer).findByRole('button', { name: 'Load more' });
    expect(within(drawer).queryByText(/SECOND PART/)).toBeNull();
    expect(within(drawer).getByText('256 KiB of 256 KiB shown')).toBeTruthy();
    fireEvent.click(more);
    expect(await within(drawer).findByText(/SECOND PART/)).toBeTruthy();
    expect(ranges.map((r) => r.range)).toEqual([`bytes=0-${LOG_PAGE_BYTES - 1}`, `bytes=${LOG_PAGE_BYTES}-${2 * LOG_PAGE_BYTES - 1}`]);
    expect(within(drawer).queryByRole('button', { name: 'Load more' })).toBeNull();
  });

  it('follows a running run’s log live and says when the run ended, with its outcome', async () => {
    vi.stubGlobal('EventSource', FakeEventSource);
    renderPage('/ns/shop/jobs/report?tab=runs&run=r4&executor=e2', OPERATOR);
    const drawer = await screen.findByRole('complementary', { name: 'Run of shard 1' });
    expect(await within(drawer).findByText('Following the log live…')).toBeTruthy();
    const [source] = FakeEventSource.logStreams();
    expect(source!.url).toBe(`${JOB}/runs/r4/log/stream?stream=stdout&executor=e2`);
    source!.emit('log', { offset: 0, next: 7, text: 'step 1\n' });
    source!.emit('log', { offset: 7, next: 14, text: 'step 2\n' });
    // A replayed chunk (after a reconnection) is not shown twice.
    source!.emit('log', { offset: 7, next: 14, text: 'step 2\n' });
    const log = within(drawer).getByRole('log');
    expect(log.textContent).toBe('step 1\nstep 2\n');
    expect(within(drawer).getByText('still running')).toBeTruthy();
    source!.emit('end', { run: { ...run('r4', 1, 'e2', 5, 4), status: 'failed', exitCode: 3, message: 'exit 3' } });
    expect(within(drawer).getByText('Run ended: Failed.')).toBeTruthy();
    expect(within(drawer).getByText(/Exit code 3/)).toBeTruthy();
    expect(source!.readyState).toBe(FakeEventSource.CLOSED);
    expect(within(drawer).queryByText('Following the log live…')).toBeNull();
    // The details above the log take the ended run's record: no longer "still running".
    await waitFor(() => expect(within(drawer).queryByText('still running')).toBeNull());
    expect(within(drawer).getAllByText('Failed').length).toBeGreaterThanOrEqual(1);
  });

  it('says when the executor went offline, and closes the stream when the drawer closes', async () => {
    vi.stubGlobal('EventSource', FakeEventSource);
    renderPage('/ns/shop/jobs/report?run=r4&executor=e2', OPERATOR);
    const drawer = await screen.findByRole('complementary', { name: 'Run of shard 1' });
    await within(drawer).findByText('Following the log live…');
    const [first] = FakeEventSource.logStreams();
    first!.emit('executor-offline', { executor: 'e2', message: "executor 'e2' went offline" });
    expect(within(drawer).getByText(/Executor offline: e2/)).toBeTruthy();
    expect(first!.readyState).toBe(FakeEventSource.CLOSED);

    // stderr opens its own stream; closing the drawer closes it.
    fireEvent.click(within(drawer).getByRole('tab', { name: 'stderr' }));
    await waitFor(() => expect(FakeEventSource.logStreams()).toHaveLength(2));
    const second = FakeEventSource.logStreams()[1]!;
    expect(second.url).toContain('stream=stderr');
    second.emit('expired', { runId: 'r4', message: 'pruned' });
    expect(within(drawer).getByText(/Log expired/)).toBeTruthy();
    fireEvent.click(within(drawer).getByRole('tab', { name: 'stdout' }));
    await waitFor(() => expect(FakeEventSource.logStreams()).toHaveLength(3));
    const third = FakeEventSource.logStreams()[2]!;
    expect(third.readyState).toBe(FakeEventSource.OPEN);
    fireEvent.click(within(drawer).getByRole('button', { name: 'Close the run' }));
    await waitFor(() => expect(screen.queryByRole('complementary')).toBeNull());
    expect(third.readyState).toBe(FakeEventSource.CLOSED);
  });

  it('shows each shard, and why an unassigned one runs nowhere, in plain words with the advice', async () => {
    vi.stubGlobal('EventSource', FakeEventSource);
    renderPage('/ns/shop/jobs/report', OPERATOR);
    const table = await screen.findByRole('table', { name: 'Shards of report' });
    const rows = within(table).getAllByRole('row');
    expect(within(rows[1]!).getByText('e1')).toBeTruthy();
    expect(within(rows[1]!).getAllByText('Succeeded', { selector: '.badge' })).toHaveLength(2);
    expect(within(rows[1]!).getByText('wrote 120 rows')).toBeTruthy();
    expect(within(table).getByText('Running', { selector: '.badge' })).toBeTruthy();
    expect(within(table).getByText('Nothing runs this shard: no online executor may take it.')).toBeTruthy();
    expect(within(table).getByText(`What to do: ${ADVICE}`, { exact: false })).toBeTruthy();
    // The running run opens from its shard.
    fireEvent.click(within(table).getByRole('button', { name: 'Open the running run of shard 1' }));
    expect(await screen.findByRole('complementary', { name: 'Run of shard 1' })).toBeTruthy();
    await waitFor(() => expect(FakeEventSource.logStreams().map((s) => s.url)).toEqual([`${JOB}/runs/r4/log/stream?stream=stdout&executor=e2`]));
  });

  it('shows an operator the actions and runs the job now; an owner also gets edit', async () => {
    const { api } = renderPage('/ns/shop/jobs/report', OPERATOR, { [`POST ${JOB}/run`]: () => answer(202, { executors: ['e1', 'e2'] }) });
    const actions = await screen.findByRole('group', { name: 'Actions on report' });
    expect(within(actions).getByRole('button', { name: 'Disable' })).toBeTruthy();
    expect(within(actions).getByRole('button', { name: 'Stop' })).toBeTruthy();
    expect(within(actions).queryByRole('link', { name: 'Edit' })).toBeNull();
    fireEvent.click(within(actions).getByRole('button', { name: 'Run now' }));
    expect(await screen.findByText('Run now: report.')).toBeTruthy();
    expect(api.callsTo('POST', `${JOB}/run`)).toHaveLength(1);
  });

  it('gives an owner the edit link', async () => {
    renderPage('/ns/shop/jobs/report', OWNER);
    const actions = await screen.findByRole('group', { name: 'Actions on report' });
    expect(within(actions).getByRole('link', { name: 'Edit' }).getAttribute('href')).toBe('/ns/shop/jobs/report/edit');
  });

  it('shows a viewer the job but no enable, run, stop or edit', async () => {
    renderPage('/ns/shop/jobs/report', VIEWER);
    expect(await screen.findByRole('heading', { name: 'report', level: 1 })).toBeTruthy();
    await screen.findByRole('table', { name: 'Shards of report' });
    expect(screen.queryByRole('group', { name: 'Actions on report' })).toBeNull();
    for (const name of ['Enable', 'Disable', 'Run now', 'Stop']) expect(screen.queryByRole('button', { name })).toBeNull();
    expect(screen.queryByRole('link', { name: 'Edit' })).toBeNull();
  });

  it('says when there are no runs yet', async () => {
    renderPage('/ns/shop/jobs/report?tab=runs', VIEWER, { [`GET ${JOB}/runs`]: () => ({ runs: [], nextBefore: null, unavailable: [] }) });
    expect(await screen.findByText('No runs recorded yet.')).toBeTruthy();
    expect(screen.queryByRole('group', { name: 'Runs timeline: one row per shard, time across' })).toBeNull();
  });

  it('says so when the run history cannot be read at all', async () => {
    renderPage('/ns/shop/jobs/report?tab=runs', VIEWER, {
      [`GET ${JOB}/runs`]: () => answer(503, { error: { code: 'unavailable', message: 'start the console with ORRERY_CLUSTER_TOKEN to read runs' } }),
    });
    expect(await screen.findByText('Run history is unavailable')).toBeTruthy();
    expect(screen.getByText(/ORRERY_CLUSTER_TOKEN/)).toBeTruthy();
  });

  it('shows the config read-only, as a list or as JSON', async () => {
    renderPage('/ns/shop/jobs/report?tab=config', VIEWER);
    const list = await screen.findByText('command');
    expect(list.closest('.config-row')!.textContent).toContain('./report.sh');
    fireEvent.click(screen.getByRole('button', { name: 'Show as JSON' }));
    expect(screen.getByLabelText('The config as JSON').textContent).toContain('"cron": "0 */5 * * * *"');
  });

  it('says when the job does not exist', async () => {
    renderPage('/ns/shop/jobs/gone', VIEWER);
    expect(await screen.findByText('There is no job gone in namespace shop. It may have been deleted.')).toBeTruthy();
  });
});
