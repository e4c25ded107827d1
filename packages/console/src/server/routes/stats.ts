/**
 * `GET /api/v1/namespaces/:namespace/stats` (viewer): jobs by state, executors by state, runs and
 * failures per job over the last 24 hours, and the ten most failing jobs.
 *
 * States come from the cache. Run counts come from the executors' run histories: every executor of
 * the namespace is asked at once for its tally of the runs that **ended** in the window
 * (`GET /runs/summary?since=`, store/runs.ts `fetchRunSummaries`: the cluster token, a timeout, a
 * size bound, the answer validated), and the tallies are summed per job — every run, however many
 * times an item ran. The runs in progress come from the shard nodes and are counted in `runs` too.
 * An executor that could not be asked is named in `unavailable`, its runs not counted.
 *
 * Fallback: without a cluster token, or when no executor answered, the counts come from the shard
 * nodes, which keep each item's **last** outcome only — at most one run per item (a lower bound).
 * `source` and `coverage` say which.
 */
import { Type, type Static } from '@sinclair/typebox';
import { OrreryError, type ShardState } from '@orrery/core';
import type { ConsoleRoutes } from '../app.js';
import type { ConsoleContext } from '../context.js';
import { fetchRunSummaries, sumRunSummaries, UNAVAILABLE_REASONS, type JobRunCounts, type RunDirectory, type RunSummaries, type RunsClientOptions, type UnavailableExecutor } from '../../store/runs.js';
import { EXECUTOR_STATES, executorSummary } from './executors.js';
import { NamespaceParams } from './namespaces.js';
import { cacheRunDirectory } from './runs.js';

/** The window of the run counts, in ms. */
export const STATS_WINDOW_MS = 24 * 3_600_000;
/** How many of the most failing jobs are listed. */
export const MOST_FAILING_LIMIT = 10;

/** The states a job is counted in, one per job, in this order of precedence. */
export const JOB_STATES = ['broken', 'disabled', 'unassigned', 'failing', 'running', 'healthy'] as const;
/** A job's state for the stats (see {@link jobState}). */
export type JobState = (typeof JOB_STATES)[number];

/** What stats need of one job (pure input). */
export interface JobFacts {
  name: string;
  configOk: boolean;
  enabled: boolean;
  unassigned: number;
  shards: Array<ShardState | undefined>;
}

/**
 * A job's one state (pure): `broken` (unreadable config), `disabled`, `unassigned` (some item has no
 * executor), `failing` (some item's last run failed or timed out), `running` (some item runs now),
 * else `healthy` (which includes never run).
 */
export function jobState(job: JobFacts): JobState {
  if (!job.configOk) return 'broken';
  if (!job.enabled) return 'disabled';
  if (job.unassigned > 0) return 'unassigned';
  if (job.shards.some((s) => s?.last && (s.last.status === 'failed' || s.last.status === 'timed-out'))) return 'failing';
  if (job.shards.some((s) => s?.state === 'running')) return 'running';
  return 'healthy';
}

/** Runs and failures of one job in the window (pure; see the module header for what it counts). */
export function jobRuns(shards: ReadonlyArray<ShardState | undefined>, now: number, windowMs = STATS_WINDOW_MS): { runs: number; failures: number; running: number; lastFailureAt: number | null } {
  let runs = 0;
  let failures = 0;
  let running = 0;
  let lastFailureAt: number | null = null;
  for (const s of shards) {
    if (!s) continue;
    if (s.state === 'running') running += 1;
    const last = s.last;
    if (!last || last.endedAt < now - windowMs || last.endedAt > now + windowMs) continue;
    runs += 1;
    if (last.status === 'failed' || last.status === 'timed-out') {
      failures += 1;
      if (lastFailureAt === null || last.endedAt > lastFailureAt) lastFailureAt = last.endedAt;
    }
  }
  return { runs: runs + running, failures, running, lastFailureAt };
}

/** Where the run counts of an answer come from. */
export const STATS_SOURCES = ['run-histories', 'shard-nodes'] as const;
/** Where the run counts of an answer come from. */
export type StatsSource = (typeof STATS_SOURCES)[number];

/** One job's counts in the answer. */
export interface JobCounts {
  runs: number;
  failures: number;
  running: number;
  lastFailureAt: number | null;
}

/**
 * A job's counts from the executors' tallies (pure): the runs that ended in the window (summed
 * over the executors, `undefined`: none ran it) plus the runs in progress — never less than what
 * the shard nodes show (`fromShards`: each item's last outcome in the window and the runs in
 * progress), which an executor that did not answer would otherwise take away.
 */
export function historyCounts(tally: Omit<JobRunCounts, 'job'> | undefined, fromShards: JobCounts): JobCounts {
  const running = fromShards.running;
  const lastFailures = [tally?.lastFailureAt ?? null, fromShards.lastFailureAt].filter((t): t is number => t !== null);
  return {
    runs: Math.max((tally?.runs ?? 0) + running, fromShards.runs),
    failures: Math.max(tally?.failures ?? 0, fromShards.failures),
    running,
    lastFailureAt: lastFailures.length > 0 ? Math.max(...lastFailures) : null,
  };
}

/** Why the counts came from the shard nodes. */
export type FallbackReason = 'no-cluster-token' | 'no-executor-answered';

/** The `coverage` sentence of an answer (pure). */
export function coverageSentence(source: { counts: 'run-histories'; unavailable: number } | { counts: 'shard-nodes'; why: FallbackReason }): string {
  const retention = 'each executor keeps its run history for a bounded time and size (by default 7 days and 1 GiB), and runs it no longer keeps are not counted';
  if (source.counts === 'run-histories') {
    return `Counted from the executors' run histories: every run that ended in the last 24 h, summed over the executors, plus the runs in progress (from the shard nodes); ${retention}.${
      source.unavailable > 0 ? ` ${source.unavailable === 1 ? 'The executor' : `The ${source.unavailable} executors`} listed in unavailable could not be asked: ${source.unavailable === 1 ? 'its runs are' : 'their runs are'} not counted.` : ''}`;
  }
  const why = source.why === 'no-cluster-token'
    ? 'The console has no ORRERY_CLUSTER_TOKEN, so it cannot read the executors\' run histories'
    : 'No executor\'s run history could be read (those of the namespace are listed in unavailable)';
  return `${why}: counted from the shard nodes in ZooKeeper instead, which keep each item's last outcome and its run in progress only — at most one run per item in the window, a lower bound. Every run is in the executors' run histories (GET …/jobs/:job/runs).`;
}

/** The answer's order of the most failing jobs (pure): most failures, then the higher failure ratio, the latest failure, the name. */
export function mostFailingFirst<T extends { job: string; runs: number; failures: number; lastFailureAt: number | null }>(jobs: readonly T[], limit = MOST_FAILING_LIMIT): T[] {
  const ratio = (j: T): number => (j.runs > 0 ? j.failures / j.runs : 1);
  return jobs
    .filter((j) => j.failures > 0)
    .sort((a, b) => b.failures - a.failures || ratio(b) - ratio(a) || (b.lastFailureAt ?? 0) - (a.lastFailureAt ?? 0) || (a.job < b.job ? -1 : 1))
    .slice(0, limit);
}

/** The namespace's stats: states from the cache, run counts from the executors' run histories (or the shard nodes). */
export async function namespaceStats(ctx: ConsoleContext, namespace: string, summaries: SummaryFetcher = fetchRunSummaries): Promise<Stats> {
  const now = ctx.now();
  const jobsByState = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
  const perJob: Array<{ job: string; fromShards: JobCounts }> = [];
  for (const name of ctx.cache.jobNames(namespace)) {
    const job = ctx.cache.job(namespace, name);
    if (!job) continue;
    const shards = [...job.shards.values()].map((s) => (s.ok ? s.value : undefined));
    const state = jobState({
      name,
      configOk: job.config.ok,
      enabled: job.config.ok && job.config.value.enabled,
      unassigned: job.assignment?.ok ? job.assignment.value.unassigned.length : 0,
      shards,
    });
    jobsByState[state] += 1;
    perJob.push({ job: name, fromShards: jobRuns(shards, now) });
  }
  const executorsByState = Object.fromEntries(EXECUTOR_STATES.map((s) => [s, 0])) as Record<(typeof EXECUTOR_STATES)[number], number>;
  for (const name of ctx.cache.executorNames(namespace)) {
    const summary = executorSummary(ctx, namespace, name, undefined);
    if (summary) executorsByState[summary.state] += 1;
  }

  // The executors' tallies, asked for after the cache was read (a run that ends meanwhile may be
  // counted both as running and as ended, once, for this answer).
  let source: StatsSource = 'shard-nodes';
  let unavailable: UnavailableExecutor[] = [];
  let coverage: string;
  let counted: Array<{ job: string } & JobCounts>;
  if (!ctx.clusterToken) {
    coverage = coverageSentence({ counts: 'shard-nodes', why: 'no-cluster-token' });
    counted = perJob.map(({ job, fromShards }) => ({ job, ...fromShards }));
  } else {
    const got = await summaries(cacheRunDirectory(ctx, namespace), Math.max(0, now - STATS_WINDOW_MS), { clusterToken: ctx.clusterToken });
    unavailable = got.unavailable;
    if (got.summaries.length === 0) {
      coverage = coverageSentence({ counts: 'shard-nodes', why: 'no-executor-answered' });
      counted = perJob.map(({ job, fromShards }) => ({ job, ...fromShards }));
    } else {
      source = 'run-histories';
      const tallies = sumRunSummaries(got.summaries);
      coverage = coverageSentence({ counts: 'run-histories', unavailable: unavailable.length });
      counted = perJob.map(({ job, fromShards }) => ({ job, ...historyCounts(tallies.get(job), fromShards) }));
    }
  }
  return {
    at: now,
    windowMs: STATS_WINDOW_MS,
    jobs: { total: perJob.length, byState: jobsByState },
    executors: { total: ctx.cache.executorNames(namespace).length, byState: executorsByState },
    runs: counted.map(({ job, runs, failures, running }) => ({ job, runs, failures, running })),
    mostFailing: mostFailingFirst(counted).map(({ job, runs, failures, lastFailureAt }) => ({ job, runs, failures, lastFailureAt })),
    source,
    unavailable: unavailable.map(({ executor, reason, message }) => ({ executor, reason, message })),
    coverage,
  };
}

const Counts = (keys: readonly string[]) => Type.Object(Object.fromEntries(keys.map((k) => [k, Type.Integer()])));
/** The answer of `GET …/namespaces/:namespace/stats` (exported: the UI's `StatsAnswer` is derived from it). */
export const StatsSchema = Type.Object({
  at: Type.Integer({ description: 'epoch ms of the answer' }),
  windowMs: Type.Integer(),
  jobs: Type.Object({ total: Type.Integer(), byState: Counts(JOB_STATES) }),
  executors: Type.Object({ total: Type.Integer(), byState: Counts(EXECUTOR_STATES) }),
  runs: Type.Array(Type.Object({
    job: Type.String(),
    runs: Type.Integer({ description: 'runs that ended in the window, plus the runs in progress' }),
    failures: Type.Integer({ description: 'runs that ended in the window failed or timed out' }),
    running: Type.Integer({ description: 'runs in progress now (from the shard nodes)' }),
  })),
  mostFailing: Type.Array(Type.Object({ job: Type.String(), runs: Type.Integer(), failures: Type.Integer(), lastFailureAt: Type.Union([Type.Integer(), Type.Null()]) })),
  source: Type.Union(STATS_SOURCES.map((s) => Type.Literal(s)), { description: "run-histories: every run, from the executors' run histories; shard-nodes: each item's last outcome only (a lower bound)" }),
  unavailable: Type.Array(Type.Object({
    executor: Type.String(),
    reason: Type.Union(UNAVAILABLE_REASONS.map((r) => Type.Literal(r)), { description: 'offline, no-http-api, timeout, unreachable, refused, history-off or bad-answer' }),
    message: Type.String(),
  }), { description: 'executors whose runs are not counted, and why' }),
  coverage: Type.String({ description: 'what the run counts count, and what they cannot' }),
});
/** How the executors' run summaries are fetched ({@link fetchRunSummaries}, or a shared one). */
export type SummaryFetcher = (directory: RunDirectory, since: number, client: RunsClientOptions) => Promise<RunSummaries>;

/** How long one round of asking the executors serves the stats of a namespace, in ms. */
export const STATS_SUMMARY_TTL_MS = 10_000;

/**
 * A {@link SummaryFetcher} per namespace that asks the executors at most once per `ttlMs`, every
 * caller meanwhile sharing that round (a dashboard refreshed on every shard event, in several
 * browsers, is one round of requests to the executors every 10 s, not one per refresh). A change
 * of the executors (one joins, leaves or moves) starts a new round at once; a failed round is not
 * kept. The window's start is the first caller's.
 */
export function sharedSummaries(now: () => number, ttlMs = STATS_SUMMARY_TTL_MS): (namespace: string) => SummaryFetcher {
  const rounds = new Map<string, { at: number; executors: string; answer: Promise<RunSummaries> }>();
  return (namespace) => async (directory, since, client) => {
    const executors = JSON.stringify((await directory.executors()).map((e) => [e.name, e.online, e.httpUrl ?? '']));
    const round = rounds.get(namespace);
    if (round && round.executors === executors && now() - round.at < ttlMs) return round.answer;
    const answer = fetchRunSummaries(directory, since, client);
    rounds.set(namespace, { at: now(), executors, answer });
    answer.catch(() => rounds.delete(namespace));
    return answer;
  };
}

/** What {@link namespaceStats} answers. */
export type Stats = Static<typeof StatsSchema>;

export const statsRoutes: ConsoleRoutes = async (app, ctx) => {
  const summariesOf = sharedSummaries(ctx.now);
  app.get('/namespaces/:namespace/stats', {
    schema: {
      tags: ['namespaces'],
      summary: "Jobs and executors by state, runs and failures per job over 24 h (every run, from the executors' run histories; executors that could not be asked are named in unavailable), the ten most failing jobs",
      params: NamespaceParams,
      response: { 200: StatsSchema },
    },
    config: { access: { level: 'viewer' } },
  }, async (request) => {
    const { namespace } = request.params as { namespace: string };
    if (!ctx.cache.namespace(namespace)) throw new OrreryError('not-found', `namespace '${namespace}' does not exist`, { details: { namespace } });
    return namespaceStats(ctx, namespace, summariesOf(namespace));
  });
};
