// The pure core of the runs store: the merge of several executors' answers (order, limit, before,
// ties, the horizon of full answers, a record over its in-progress entry), Range parsing, and the
// validation of what an executor sends.
import { describe, expect, it } from 'vitest';
import { formatByteRange, mergeRuns, parseByteRange, toRunView, type RunView, type RunsAnswer } from './runs.js';

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
