// The job list's pure rules over a cache of 10,000 jobs held in memory: filters, sort, paging by
// offset and cursor, summaries; the memo of rendered pages. (The cost of a page is measured by
// `npm run bench console`.)
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJobConfig, type ZkStat } from '@orrery/core';
import type { CachedJob, Parsed } from './console-cache.js';
import { createJobPageMemo, createScheduleMemo, JOB_STATES, listJobPage, type JobListPage, type JobListQuery } from './job-list.js';

const stat = (version: number): ZkStat => ({ version, mzxid: 1, czxid: 1, ctime: 0, mtime: 0, cversion: 0, aversion: 0, ephemeralOwner: '0', dataLength: 0, numChildren: 0, pzxid: 1 }) as unknown as ZkStat;
const NOW = Date.UTC(2025, 0, 1, 0, 0, 0);

function makeJobs(count: number): Map<string, CachedJob> {
  const jobs = new Map<string, CachedJob>();
  for (let i = 0; i < count; i += 1) {
    const name = `job-${String(i).padStart(5, '0')}`;
    const config: Parsed<ReturnType<typeof parseJobConfig>> = i % 1000 === 999
      ? { ok: false, problem: 'not valid JSON', stat: stat(1) }
      : { ok: true, value: parseJobConfig({ name, type: 'shell', command: 'true', cron: `${i % 60} * * * *`, timeZone: i % 2 ? 'Europe/Berlin' : 'UTC', enabled: i % 3 !== 0, groups: [`g${i % 10}`], shardingTotalCount: 4 }), stat: stat(i % 7) };
    const shards = new Map<number, Parsed<never>>();
    for (let item = 0; item < 4; item += 1) {
      const failed = i % 50 === 0 && item === 1;
      shards.set(item, { ok: true, value: { state: i % 100 === 0 && item === 0 ? 'running' : 'idle', ...(i % 100 === 0 && item === 0 ? { executor: 'e', session: 's', runId: 'r', fireTime: 1, startedAt: 1, attempt: 1 } : {}), last: { status: failed ? 'failed' : 'succeeded', exitCode: failed ? 1 : 0, startedAt: 1, endedAt: 1000 + item, durationMs: 5, executor: 'e', runId: `r${item}`, fireTime: 1, attempt: 1, fencingToken: 1, message: '' } } as never, stat: stat(1) });
    }
    jobs.set(name, { name, config, assignment: undefined, shards } as CachedJob);
  }
  return jobs;
}

const jobs = makeJobs(10_000);
const names = [...jobs.keys()].sort();
const cache = { jobNames: () => names, job: (_ns: string, name: string) => jobs.get(name) };

describe('listJobPage', () => {
  const schedules = createScheduleMemo();
  const page = (query: JobListQuery) => listJobPage(cache, 'ns', query, schedules, NOW);

  it('pages sorted by name with the total, by offset and by cursor', () => {
    const first = page({ limit: 3 });
    expect(first).toMatchObject({ total: 10_000, limit: 3, offset: 0, nextCursor: 'job-00002' });
    expect(first.items.map((i) => i.name)).toEqual(['job-00000', 'job-00001', 'job-00002']);
    expect(page({ limit: 2, cursor: first.nextCursor! }).items.map((i) => i.name)).toEqual(['job-00003', 'job-00004']);
    expect(page({ limit: 2, cursor: 'job-00003x' }).items.map((i) => i.name)).toEqual(['job-00004', 'job-00005']); // a cursor job gone since
    expect(page({ limit: 2, offset: 9_999 })).toMatchObject({ nextCursor: null, items: [{ name: 'job-09999' }] });
    expect(page({ limit: 10_000 }).items).toHaveLength(500);
  });

  it('filters by name, group and state', () => {
    expect(page({ name: 'JOB-0001', limit: 500 }).total).toBe(10);
    expect(page({ group: 'g3', limit: 500 }).total).toBe(1000);
    expect(page({ group: 'g9', limit: 500 }).total).toBe(990); // less the broken ones (i % 1000 === 999)
    expect(page({ state: 'broken' }).items.map((i) => i.name)).toEqual(Array.from({ length: 10 }, (_, k) => `job-${String(k * 1000 + 999).padStart(5, '0')}`));
    expect(page({ state: 'running' }).total).toBe(100);
    expect(page({ state: 'failing' }).total).toBe(200);
    expect(page({ state: 'disabled' }).total + page({ state: 'enabled' }).total + page({ state: 'broken' }).total).toBe(10_000);
  });

  it('filters names again for a new list of names, and for each filter (its matches are kept per list)', () => {
    let list = names.slice(0, 100);
    const c = { jobNames: () => list, job: (_ns: string, name: string) => jobs.get(name) };
    const matched = (needle: string) => list.filter((n) => n.toLowerCase().includes(needle.toLowerCase()));
    const ask = (name: string, offset: number) => listJobPage(c, 'ns', { name, limit: 3, offset }, schedules, NOW);
    for (const [needle, offset] of [['JOB-0001', 0], ['job-0001', 3], ['5', 0], ['JOB-0001', 6], ['5', 9]] as const) {
      expect(ask(needle, offset)).toMatchObject({ total: matched(needle).length, items: matched(needle).slice(offset, offset + 3).map((name) => ({ name })) });
    }
    list = list.filter((n) => n !== 'job-00015' && n !== 'job-00011'); // the cache's new list
    expect(ask('job-0001', 0)).toMatchObject({ total: 8, items: [{ name: 'job-00010' }, { name: 'job-00012' }, { name: 'job-00013' }] });
    expect(ask('5', 0).total).toBe(matched('5').length);
  });

  it('summarises each job: next fire time when enabled, item states, the last outcomes newest first', () => {
    const [item] = page({ name: 'job-00100' }).items;
    expect(item).toMatchObject({ name: 'job-00100', broken: false, enabled: true, cron: '40 * * * *', timeZone: 'UTC', shardCount: 4, groups: ['g0'], summary: { running: 1, failing: 1, succeeded: 3, unreadable: 0 } });
    expect(item!.broken === false && item!.nextFireTime).toBe(Date.UTC(2025, 0, 1, 0, 40));
    expect(item!.broken === false && item!.lastOutcomes.map((o) => o.item)).toEqual([3, 2, 1, 0]);
    const [disabled] = page({ name: 'job-00003' }).items;
    expect(disabled).toMatchObject({ enabled: false, nextFireTime: null });
  });

  it('answers every filtered page of 10,000 jobs with 50 items or fewer, in name order', () => {
    // Its speed is the console bench's to measure (npm run bench console), not a test's: a loaded CI
    // machine would make a timing assertion flaky.
    const queries: JobListQuery[] = [{ limit: 50 }, { limit: 50, name: 'job-0' }, { limit: 50, state: 'enabled', offset: 200 }, { limit: 50, group: 'g4', state: 'failing' }];
    for (const query of queries) {
      const { items } = page(query);
      expect(items.length).toBeLessThanOrEqual(50);
      const names = items.map((i) => i.name);
      expect(names).toEqual([...names].sort());
    }
  });
});

describe('createJobPageMemo', () => {
  /** A cache whose jobs and names can change, as the console's does: a changed job gets a new view. */
  function mutableCache(count: number) {
    const views = makeJobs(count);
    let list = [...views.keys()].sort();
    const groups = new Map<string, string[]>();
    const groupList = (group: string) => {
      let g = groups.get(group);
      if (!g) groups.set(group, (g = list.filter((n) => { const c = views.get(n)!.config; return c.ok && c.value.groups.includes(group); })));
      return g;
    };
    return {
      cache: { jobNames: () => list, job: (_ns: string, name: string) => views.get(name), jobNamesInGroup: (_ns: string, group: string) => groupList(group) },
      /** A shard of the job ran: its view is rebuilt. */
      touch(name: string, endedAt: number) {
        const old = views.get(name)!;
        const shards = new Map(old.shards);
        const s = shards.get(0)!;
        if (s.ok) shards.set(0, { ...s, value: { ...s.value, last: { ...s.value.last!, endedAt } } });
        views.set(name, { ...old, shards });
      },
      /** A job is removed: the name list (and group lists) are new. */
      remove(name: string) {
        views.delete(name);
        list = list.filter((n) => n !== name);
        groups.clear();
      },
    };
  }
  // A few queries, asked again and again (as open pages refresh), of every shape the memo handles.
  const QUERIES: JobListQuery[] = [
    {}, { limit: 10 }, { limit: 5, offset: 3 }, { limit: 7, cursor: 'job-00010' }, { limit: 4, cursor: 'job-00100x' },
    { name: 'JOB-0001', limit: 6 }, { name: 'zzz' }, { group: 'g1', limit: 8 }, { group: 'none' }, { group: 'g3', name: '3', limit: 5 },
    { state: 'failing', limit: 5 }, { state: 'enabled', group: 'g1', limit: 5 },
  ];
  const query = fc.constantFrom(...QUERIES);
  // Weighted so that a page is often asked again before the next change that moves it.
  const step = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('ask' as const), query }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('touch' as const), job: fc.integer({ min: 0, max: 40 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), job: fc.integer({ min: 0, max: 199 }) }) },
    // Mostly forwards; now and then the wall clock steps back.
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('time' as const), ms: fc.integer({ min: -90_000, max: 120_000 }) }) },
  );

  /**
   * JSON.stringify, counting the renders of whole pages: a page renders its envelope (no item) once,
   * and each item not in the memo as a page of one; a state filter's page is rendered whole.
   */
  const pageRenders = (count: () => void) => (page: JobListPage) => {
    if (page.items.length !== 1) count();
    return JSON.stringify(page);
  };

  it('sends exactly what a fresh render would, whatever changed in between (property)', () => {
    fc.assert(fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
      const m = mutableCache(200);
      const memo = createJobPageMemo();
      const schedules = createScheduleMemo();
      let now = NOW;
      for (const s of steps) {
        const name = (i: number) => `job-${String(i).padStart(5, '0')}`;
        if (s.kind === 'touch') { if (m.cache.job('ns', name(s.job))) m.touch(name(s.job), now); }
        else if (s.kind === 'remove') m.remove(name(s.job));
        else if (s.kind === 'time') now += s.ms;
        else {
          const sent = memo.body(m.cache, 'ns', s.query, schedules, now, JSON.stringify);
          expect(sent).toBe(JSON.stringify(listJobPage(m.cache, 'ns', s.query, createScheduleMemo(), now)));
        }
      }
    }), { numRuns: 500 });
  });

  it('renders a repeated page once while nothing on it changes, and again when something does', () => {
    const m = mutableCache(200);
    const memo = createJobPageMemo();
    const schedules = createScheduleMemo();
    let renders = 0;
    const render = pageRenders(() => { renders += 1; });
    const ask = (q: JobListQuery, at = NOW) => memo.body(m.cache, 'ns', q, schedules, at, render);
    const first = ask({ limit: 10 });
    expect(renders).toBe(1);
    // A page asked once is not kept (a viewer paging through 10,000 jobs would only churn the memo);
    // asked again, it is.
    expect(ask({ limit: 10 })).toBe(first);
    expect(renders).toBe(2);
    expect(ask({ limit: 10 })).toBe(first);
    expect(ask({ limit: 10, name: 'job' })).toBe(ask({ limit: 10, name: 'job' }));
    ask({ limit: 10, name: 'job' });
    expect(renders).toBe(4); // the two queries, twice each
    m.touch('job-00150', NOW); // not on the page
    ask({ limit: 10 });
    expect(renders).toBe(4);
    m.touch('job-00004', NOW); // on the page
    expect(ask({ limit: 10 })).not.toBe(first);
    expect(renders).toBe(5);
    ask({ limit: 10 });
    expect(renders).toBe(5); // a page once kept is kept again when it changes
    ask({ limit: 10 }, Date.UTC(2025, 0, 1, 0, 1)); // job-00001 fires at minute 1: its next fire time moves
    expect(renders).toBe(6);
    m.remove('job-00150'); // the total changes
    ask({ limit: 10 }, Date.UTC(2025, 0, 1, 0, 1));
    expect(renders).toBe(7);
    ask({ limit: 10, state: 'enabled' });
    ask({ limit: 10, state: 'enabled' });
    ask({ limit: 10, state: 'enabled' });
    expect(renders).toBe(10); // a state filter reads every job: never from the memo
  });

  it('renders each job once while its item holds, whichever page it is on', () => {
    const m = mutableCache(200);
    const memo = createJobPageMemo();
    const schedules = createScheduleMemo();
    const rendered: string[] = [];
    const render = (page: JobListPage) => {
      if (page.items.length === 1) rendered.push(page.items[0]!.name);
      return JSON.stringify(page);
    };
    const ask = (q: JobListQuery, at = NOW) => memo.body(m.cache, 'ns', q, schedules, at, render);
    const fresh = (q: JobListQuery, at = NOW) => JSON.stringify(listJobPage(m.cache, 'ns', q, createScheduleMemo(), at));
    expect(ask({ limit: 10 })).toBe(fresh({ limit: 10 }));
    expect(rendered).toHaveLength(10);
    // Another page over five of the same jobs: only the five others are rendered.
    expect(ask({ limit: 10, offset: 5 })).toBe(fresh({ limit: 10, offset: 5 }));
    expect(rendered.slice(10)).toEqual(['job-00010', 'job-00011', 'job-00012', 'job-00013', 'job-00014']);
    // A job that changed is rendered again; so is one whose next fire time has come.
    m.touch('job-00007', NOW);
    expect(ask({ limit: 3, offset: 6 })).toBe(fresh({ limit: 3, offset: 6 }));
    expect(rendered.slice(15)).toEqual(['job-00007']);
    // job-00007 fires at minute 7 (job-00006 is disabled: no fire time; job-00008's is at minute 8).
    const later = Date.UTC(2025, 0, 1, 0, 7, 30);
    expect(ask({ limit: 3, offset: 6, name: 'job' }, later)).toBe(fresh({ limit: 3, offset: 6, name: 'job' }, later));
    expect(rendered.slice(16)).toEqual(['job-00007']);
  });

  it('renders whole pages for a serializer that does not write the items last', () => {
    const m = mutableCache(50);
    const memo = createJobPageMemo();
    const schedules = createScheduleMemo();
    const itemsFirst = ({ items, ...rest }: JobListPage) => JSON.stringify({ items, ...rest });
    for (const q of [{ limit: 5 }, { limit: 5, offset: 2 }, { limit: 5 }, { limit: 5 }]) {
      expect(memo.body(m.cache, 'ns', q, schedules, NOW, itemsFirst)).toBe(itemsFirst(listJobPage(m.cache, 'ns', q, createScheduleMemo(), NOW)));
    }
  });

  it('renders again when the wall clock steps back past a fire time', () => {
    const m = mutableCache(200);
    const memo = createJobPageMemo();
    const schedules = createScheduleMemo();
    const at = (t: number) => memo.body(m.cache, 'ns', { limit: 10 }, schedules, t, JSON.stringify);
    const later = NOW + 5.5 * 60_000; // job-00004 (minute 4) next fires at 01:04
    const back = NOW + 3.5 * 60_000; // … and from here at 00:04
    at(later);
    expect(at(back)).toBe(JSON.stringify(listJobPage(m.cache, 'ns', { limit: 10 }, createScheduleMemo(), back)));
  });

  it('remembers a bounded number of pages asked only once', () => {
    const m = mutableCache(200);
    const memo = createJobPageMemo(2);
    const schedules = createScheduleMemo();
    let renders = 0;
    const render = pageRenders(() => { renders += 1; });
    const ask = (offset: number) => memo.body(m.cache, 'ns', { limit: 1, offset }, schedules, NOW, render);
    ask(0);
    ask(0); // asked before: kept
    ask(0);
    expect(renders).toBe(2);
    // 2 pages × 4 keys: the 9th key asked once starts the keys again.
    for (let offset = 1; offset <= 9; offset += 1) ask(offset);
    ask(1); // forgotten: asked "once" again, not kept
    ask(1);
    expect(renders).toBe(13);
    ask(1);
    expect(renders).toBe(13);
  });

  it('keeps at most its size in characters: a page larger than that is rendered every time', () => {
    const m = mutableCache(200);
    const memo = createJobPageMemo(256, 3_000);
    const schedules = createScheduleMemo();
    let renders = 0;
    const render = pageRenders(() => { renders += 1; });
    const ask = (q: JobListQuery) => memo.body(m.cache, 'ns', q, schedules, NOW, render);
    const twice = (q: JobListQuery) => { ask(q); ask(q); };
    twice({ limit: 1 });
    ask({ limit: 1 });
    expect(renders).toBe(2);
    twice({ limit: 50 }); // about 30,000 characters: never kept
    ask({ limit: 50 });
    expect(renders).toBe(5);
    twice({ limit: 2 });
    twice({ limit: 3 }); // over 3,000 with the others: the memo starts again
    ask({ limit: 1 });
    expect(renders).toBe(10);
  });
});
