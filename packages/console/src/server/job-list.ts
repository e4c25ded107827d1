/**
 * The console's job list, from the cache (no I/O): filter by name (substring), group and state,
 * sort by name, page (offset or cursor), and summarise each job of the page — its schedule's next
 * fire time, the states of its items and its last outcomes.
 *
 * Cost: a name filter reads names only (lower-cased once per list of names, and its matches kept per
 * list and filter, so paging through them reads the names once); a group filter starts
 * from the cache's names of the group, when it keeps them; a state filter (or a group filter on a
 * cache without that index) reads each remaining job's parsed config (memoised by the cache) and,
 * for a state filter, its shard nodes; only the page's jobs are summarised, and a compiled schedule is reused for every
 * job with the same cron, zone and pause periods ({@link createScheduleMemo}). A page of 50 of 10,000
 * jobs stays well under a millisecond for a name filter, a few for the others (`npm run bench
 * console` serves it). A page asked again is sent as rendered while it is provably the same
 * ({@link createJobPageMemo}).
 */
import { createSchedule, type JobConfig, type RunStatus, type Schedule } from '@orrery/core';
import type { CachedJob, ConsoleCache } from './console-cache.js';

/** The states a job can be filtered by. `running` and `failing` combine with `enabled`/`disabled`. */
export const JOB_STATES = ['enabled', 'disabled', 'running', 'failing', 'broken'] as const;
/** A job state filter. */
export type JobStateFilter = (typeof JOB_STATES)[number];

/** The default page size. */
export const JOB_PAGE_DEFAULT = 50;
/** The largest page size. */
export const JOB_PAGE_MAX = 500;
/** How many last outcomes each listed job shows, newest first. */
export const JOB_LAST_OUTCOMES = 5;

/** What the list was asked for. */
export interface JobListQuery {
  /** Jobs whose name contains this (case-insensitive). */
  name?: string;
  /** Jobs in this group. */
  group?: string;
  state?: JobStateFilter;
  /** Page size (default {@link JOB_PAGE_DEFAULT}, at most {@link JOB_PAGE_MAX}). */
  limit?: number;
  /** Jobs to skip (after the cursor, if any). */
  offset?: number;
  /** Start after this job name (the previous page's `nextCursor`). */
  cursor?: string;
}

/** One item's last outcome, as listed. */
export interface ListedOutcome {
  item: number;
  status: RunStatus;
  endedAt: number;
  durationMs: number;
  executor: string;
  message: string;
}

/** The states of a job's items. */
export interface JobStateSummary {
  /** Items running now. */
  running: number;
  /** Items whose last run failed or timed out. */
  failing: number;
  /** Items whose last run succeeded. */
  succeeded: number;
  /** Items with a shard node the cache cannot read. */
  unreadable: number;
}

/** One job of the list: its summary, or (broken) the problem with its config. */
export type JobListItem =
  | {
      name: string;
      broken: false;
      version: number;
      type: JobConfig['type'];
      description: string;
      cron: string | null;
      timeZone: string;
      /** The next fire time (epoch ms); null for a disabled or passive job, or a schedule with no more fires. */
      nextFireTime: number | null;
      enabled: boolean;
      groups: string[];
      shardCount: number;
      localMode: boolean;
      summary: JobStateSummary;
      lastOutcomes: ListedOutcome[];
    }
  | { name: string; broken: true; version: number; problem: string };

/** A page of the list, with the total and the parameters it was made with. */
export interface JobListPage {
  total: number;
  limit: number;
  offset: number;
  cursor: string | null;
  /** The cursor of the next page; null on the last page. */
  nextCursor: string | null;
  filter: { name: string | null; group: string | null; state: JobStateFilter | null };
  items: JobListItem[];
}

/**
 * A memo of compiled schedules and their next fire times, keyed by cron, zone and pause periods
 * (bounded): compiling a schedule costs about a third of a millisecond and a next fire time up to a
 * tenth, so a list reuses both — a next fire time for as long as it has not passed.
 */
export interface ScheduleMemo {
  /** The job's next fire time after `now` (epoch ms); undefined for a passive job or a schedule with no more fires. */
  next(config: JobConfig, now: number): number | undefined;
}

/** How many schedules a memo keeps before it starts again. */
export const SCHEDULE_MEMO_SIZE = 10_000;

/** Creates a memo; a config whose schedule cannot be compiled has no next fire time. */
export function createScheduleMemo(size = SCHEDULE_MEMO_SIZE): ScheduleMemo {
  // `from`..`next`: the next fire time after any instant in [from, next) is `next`.
  const memo = new Map<string, { schedule: Schedule | null; from: number; next: number | undefined }>();
  return {
    next(config, now) {
      if (config.cron === undefined) return undefined;
      const key = `${config.cron}\u0000${config.timeZone}\u0000${config.pausePeriodDate}\u0000${config.pausePeriodTime}`;
      let entry = memo.get(key);
      if (entry === undefined) {
        let schedule: Schedule | null;
        try {
          schedule = createSchedule({ cron: config.cron, timeZone: config.timeZone, pausePeriodDate: config.pausePeriodDate, pausePeriodTime: config.pausePeriodTime });
        } catch {
          schedule = null; // a stored config is validated; this is belt and braces
        }
        if (memo.size >= size) memo.clear();
        entry = { schedule, from: Number.POSITIVE_INFINITY, next: undefined };
        memo.set(key, entry);
      }
      if (!entry.schedule) return undefined;
      if (now >= entry.from && entry.next !== undefined && now < entry.next) return entry.next;
      entry.from = now;
      entry.next = entry.schedule.next(now);
      return entry.next;
    },
  };
}

/** The states of a cached job's items (pure). */
export function summariseStates(job: CachedJob): JobStateSummary {
  const summary: JobStateSummary = { running: 0, failing: 0, succeeded: 0, unreadable: 0 };
  for (const shard of job.shards.values()) {
    if (!shard.ok) {
      summary.unreadable += 1;
      continue;
    }
    if (shard.value.state !== 'idle') summary.running += 1;
    const status = shard.value.last?.status;
    if (status === 'failed' || status === 'timed-out') summary.failing += 1;
    else if (status === 'succeeded') summary.succeeded += 1;
  }
  return summary;
}

/** The newest `count` outcomes of a job's items, newest first (pure). */
export function lastOutcomes(job: CachedJob, count = JOB_LAST_OUTCOMES): ListedOutcome[] {
  const all: ListedOutcome[] = [];
  for (const [item, shard] of job.shards) {
    const last = shard.ok ? shard.value.last : undefined;
    if (last) all.push({ item, status: last.status, endedAt: last.endedAt, durationMs: last.durationMs, executor: last.executor, message: last.message });
  }
  return all.sort((a, b) => b.endedAt - a.endedAt || a.item - b.item).slice(0, count);
}

/** True when a cached job passes the filter (pure). */
export function matchesJob(job: CachedJob, query: JobListQuery): boolean {
  if (query.name !== undefined && !job.name.toLowerCase().includes(query.name.toLowerCase())) return false;
  const config = job.config.ok ? job.config.value : undefined;
  if (query.group !== undefined && !config?.groups.includes(query.group)) return false;
  switch (query.state) {
    case undefined:
      return true;
    case 'broken':
      return config === undefined;
    case 'enabled':
      return config?.enabled === true;
    case 'disabled':
      return config?.enabled === false;
    case 'running':
      return config !== undefined && [...job.shards.values()].some((s) => s.ok && s.value.state !== 'idle');
    case 'failing':
      return config !== undefined && [...job.shards.values()].some((s) => s.ok && (s.value.last?.status === 'failed' || s.value.last?.status === 'timed-out'));
  }
}

/** One job's list entry (pure but for the clock it is given). */
export function listItem(job: CachedJob, schedules: ScheduleMemo, now: number): JobListItem {
  if (!job.config.ok) return { name: job.name, broken: true, version: job.config.stat.version, problem: job.config.problem };
  const c = job.config.value;
  return {
    name: job.name,
    broken: false,
    version: job.config.stat.version,
    type: c.type,
    description: c.description,
    cron: c.cron ?? null,
    timeZone: c.timeZone,
    nextFireTime: (c.enabled ? schedules.next(c, now) : undefined) ?? null,
    enabled: c.enabled,
    groups: c.groups,
    shardCount: c.shardingTotalCount,
    localMode: c.localMode,
    summary: summariseStates(job),
    lastOutcomes: lastOutcomes(job),
  };
}

/** How many name filters' matches are kept per list of names. */
const NAME_FILTERS_KEPT = 64;

/**
 * What the name filter derives from a list of names, kept with the list (the cache hands out the same
 * list until it changes): the names lower-cased, and each filter's matches — paging through a
 * filtered list reads the names once, not once per page.
 */
interface NameIndex {
  lower: readonly string[];
  matches: Map<string, readonly string[]>;
}
const nameIndexes = new WeakMap<readonly string[], NameIndex>();

function nameIndex(names: readonly string[]): NameIndex {
  let index = nameIndexes.get(names);
  if (index === undefined) {
    index = { lower: names.map((name) => name.toLowerCase()), matches: new Map() };
    nameIndexes.set(names, index);
  }
  return index;
}

/** The cache reads a list makes. */
type ListCache = Pick<ConsoleCache, 'jobNames' | 'job'> & Partial<Pick<ConsoleCache, 'jobNamesInGroup'>>;

/** Which names a query's page holds, and where it sits in the filtered list. */
interface PageSelection {
  /** The list the filter ran over: the namespace's names, or the group's (a cache's same list until it changes). */
  source: readonly string[];
  total: number;
  limit: number;
  offset: number;
  /** The page's job names, in order. */
  names: string[];
  more: boolean;
}

function selectPage(cache: ListCache, namespace: string, query: JobListQuery): PageSelection {
  const limit = Math.min(query.limit ?? JOB_PAGE_DEFAULT, JOB_PAGE_MAX);
  const offset = query.offset ?? 0;
  // Sorted by name (the cache lists children sorted); the filter keeps that order. The name filter
  // runs on the names, a group filter on the cache's names of the group; only a state filter needs
  // the jobs themselves (reading 10,000 parsed configs scattered over the heap costs milliseconds).
  const inGroup = query.group === undefined ? undefined : cache.jobNamesInGroup?.(namespace, query.group);
  const names = inGroup ?? cache.jobNames(namespace);
  const needle = query.name?.toLowerCase();
  const index = needle === undefined ? undefined : nameIndex(names);
  const group = inGroup === undefined ? query.group : undefined;
  const jobFilter: JobListQuery | undefined = group !== undefined || query.state !== undefined ? { group, state: query.state } : undefined;
  let matching: readonly string[] = names;
  const byName = needle !== undefined && jobFilter === undefined ? index!.matches.get(needle) : undefined;
  if (byName !== undefined) matching = byName;
  else if (needle !== undefined || jobFilter !== undefined) {
    const kept: string[] = [];
    for (let i = 0; i < names.length; i += 1) {
      if (needle !== undefined && !index!.lower[i]!.includes(needle)) continue;
      const name = names[i]!;
      if (jobFilter === undefined) {
        kept.push(name);
        continue;
      }
      const job = cache.job(namespace, name);
      if (job && matchesJob(job, jobFilter)) kept.push(name);
    }
    matching = kept;
    if (needle !== undefined && jobFilter === undefined) {
      if (index!.matches.size >= NAME_FILTERS_KEPT) index!.matches.clear();
      index!.matches.set(needle, kept);
    }
  }
  let start = 0;
  if (query.cursor !== undefined) {
    const cursor = query.cursor;
    // The first name after the cursor (the cursor's job may be gone since).
    let lo = 0;
    let hi = matching.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (matching[mid]! <= cursor) lo = mid + 1;
      else hi = mid;
    }
    start = lo;
  }
  return {
    source: names,
    total: matching.length,
    limit,
    offset,
    names: matching.slice(start + offset, start + offset + limit),
    more: start + offset + limit < matching.length,
  };
}

function pageOf(selection: PageSelection, jobs: ReadonlyArray<CachedJob | undefined>, query: JobListQuery, schedules: ScheduleMemo, now: number): JobListPage {
  const { names, more } = selection;
  return {
    total: selection.total,
    limit: selection.limit,
    offset: selection.offset,
    cursor: query.cursor ?? null,
    nextCursor: more && names.length > 0 ? names.at(-1)! : null,
    filter: { name: query.name ?? null, group: query.group ?? null, state: query.state ?? null },
    items: jobs.flatMap((job) => (job ? [listItem(job, schedules, now)] : [])),
  };
}

/** A page of a namespace's jobs from the cache (see the module header). */
export function listJobPage(cache: ListCache, namespace: string, query: JobListQuery, schedules: ScheduleMemo, now: number): JobListPage {
  const selection = selectPage(cache, namespace, query);
  return pageOf(selection, selection.names.map((name) => cache.job(namespace, name)), query, schedules, now);
}

/** Until when a listed item stays as it is: its next fire time (the one figure that moves with the clock). */
const itemUntil = (item: JobListItem): number => (!item.broken && item.nextFireTime !== null ? item.nextFireTime : Number.POSITIVE_INFINITY);

/** How many pages a {@link JobPageMemo} keeps before it starts again. */
export const JOB_PAGE_MEMO_SIZE = 256;
/**
 * How many characters of rendered pages it keeps before it starts again: a page of 500 jobs with
 * long descriptions runs to megabytes, and any viewer can ask for 256 different ones — the memo must
 * not be the way to fill the console's heap.
 */
export const JOB_PAGE_MEMO_CHARS = 8_000_000;
/** The memo remembers at most this many keys per page it keeps, of pages asked only once. */
const ASKED_PER_PAGE = 4;

/**
 * A memo of rendered list pages (the body as sent). Many clients polling the same page (every open
 * jobs page refreshes itself) cost one render per change, not one per request: a page is sent
 * again, unrendered, while it is provably the same —
 * - the filter ran over the same list (the cache keeps a namespace's or a group's names as one list
 *   until a job is added, removed or regrouped), so the same names match;
 * - every job of the page has the same view (the cache builds a job's view anew when any of its
 *   nodes changes: config, assignment, a shard);
 * - and no job of the page has reached its next fire time (the one figure that moves with the clock),
 *   nor has the clock gone back before the render.
 * A state filter reads every job of the namespace, so its pages are rendered every time.
 *
 * Each job's item is kept as rendered, too, by its view object, until its next fire time (or a step
 * back of the clock): a page not in the memo renders only the items of jobs that changed since they
 * were last listed, on whatever page — with a different page per request from 10 clients over
 * 10,000 jobs, 2.7 times the requests per second of rendering every item.
 *
 * A page is kept from its second request on (the keys of pages asked once are remembered): a viewer
 * paging through the list asks each page once, and keeping every such page only churned the memo —
 * each kept body outlives V8's young generation, so the old generation filled with dead pages and
 * was collected in pauses of over 100 ms (the list's p99 under 10 clients asking a different page
 * each time fell from 43 to 14 ms without them). Bounded by {@link JOB_PAGE_MEMO_SIZE} pages,
 * {@link JOB_PAGE_MEMO_CHARS} characters and 4 remembered keys per page.
 */
export interface JobPageMemo {
  /**
   * The page's body: from the memo, or rendered (`render`, the route's serializer) and kept. Every
   * call on one memo must pass the same `render`: the items it rendered are reused.
   */
  body(cache: ListCache, namespace: string, query: JobListQuery, schedules: ScheduleMemo, now: number, render: (page: JobListPage) => string): string;
}

/** Creates an empty memo. */
export function createJobPageMemo(size = JOB_PAGE_MEMO_SIZE, chars = JOB_PAGE_MEMO_CHARS): JobPageMemo {
  const pages = new Map<string, { source: readonly string[]; names: readonly string[]; jobs: ReadonlyArray<CachedJob | undefined>; from: number; until: number; body: string }>();
  /** The keys of pages asked once and not kept. */
  const asked = new Set<string>();
  let held = 0;
  /** Each job view's item as rendered, while it holds (see {@link JobPageMemo}). */
  const items = new WeakMap<CachedJob, { from: number; until: number; json: string }>();

  /**
   * A page's body and the time it holds until (the earliest next fire time on it). The items come
   * from `items` where they hold, the rest are rendered one by one into it; the envelope is rendered
   * with no item and the items are put in its `"items":[]`, which a serializer of the schema writes
   * last. A render that does not end so (another serializer) renders the whole page instead.
   */
  function renderPage(selection: PageSelection, jobs: ReadonlyArray<CachedJob | undefined>, query: JobListQuery, schedules: ScheduleMemo, now: number, render: (page: JobListPage) => string): { body: string; until: number } {
    const whole = (): { body: string; until: number } => {
      const page = pageOf(selection, jobs, query, schedules, now);
      return { body: render(page), until: Math.min(...page.items.map(itemUntil)) };
    };
    const envelope = pageOf(selection, [], query, schedules, now);
    const head = render(envelope);
    if (!head.endsWith('"items":[]}')) return whole();
    const prefix = head.slice(0, -2); // … "items":[
    let until = Number.POSITIVE_INFINITY;
    const parts: string[] = [];
    for (const job of jobs) {
      if (!job) continue;
      let hit = items.get(job);
      if (!hit || now < hit.from || now >= hit.until) {
        const item = listItem(job, schedules, now);
        const one = render({ ...envelope, items: [item] });
        if (!one.startsWith(prefix) || !one.endsWith(']}')) return whole(); // not a page of one item as expected
        hit = { from: now, until: itemUntil(item), json: one.slice(prefix.length, -2) };
        items.set(job, hit);
      }
      if (hit.until < until) until = hit.until;
      parts.push(hit.json);
    }
    return { body: `${prefix}${parts.join(',')}]}`, until };
  }
  return {
    body(cache, namespace, query, schedules, now, render) {
      const byState = query.state !== undefined || (query.group !== undefined && cache.jobNamesInGroup === undefined);
      if (byState) return render(listJobPage(cache, namespace, query, schedules, now));
      const key = JSON.stringify([namespace, query.name ?? null, query.group ?? null, query.limit ?? null, query.offset ?? null, query.cursor ?? null]);
      const source = query.group === undefined ? cache.jobNames(namespace) : cache.jobNamesInGroup!(namespace, query.group);
      const hit = pages.get(key);
      if (hit && hit.source === source && now >= hit.from && now < hit.until && hit.names.every((name, i) => cache.job(namespace, name) === hit.jobs[i])) return hit.body;
      const selection = selectPage(cache, namespace, query);
      const jobs = selection.names.map((name) => cache.job(namespace, name));
      const { body, until } = renderPage(selection, jobs, query, schedules, now, render);
      if (hit) held -= hit.body.length;
      else if (!asked.delete(key)) {
        // Asked for the first time (since the memo last started again): not kept yet.
        if (asked.size >= size * ASKED_PER_PAGE) asked.clear();
        asked.add(key);
        return body;
      }
      if (body.length > chars) {
        pages.delete(key);
        return body;
      }
      if ((!hit && pages.size >= size) || held + body.length > chars) {
        pages.clear();
        held = 0;
      }
      pages.set(key, { source: selection.source, names: selection.names, jobs, from: now, until, body });
      held += body.length;
      return body;
    },
  };
}
