/**
 * `GET /api/v1/namespaces/:namespace/stats` (viewer): jobs by state, executors by state, runs and
 * failures per job over the last 24 hours, and the ten most failing jobs — from the cache alone.
 *
 * What ZooKeeper holds, and so what this counts: each item's shard node keeps its **last** outcome
 * and the run in progress, nothing older. So "runs in 24 h" counts the items whose last run ended
 * in the window (at most one per item), plus the items running now; "failures" the items whose
 * last run in the window failed or timed out. A job that ran an item ten times today counts one.
 * The executors' run histories (`GET …/jobs/:job/runs`) have every run; the answer says so
 * (`coverage`).
 */
import { Type } from '@sinclair/typebox';
import { OrreryError, type ShardState } from '@orrery/core';
import type { ConsoleRoutes } from '../app.js';
import type { ConsoleContext } from '../context.js';
import { EXECUTOR_STATES, executorSummary } from './executors.js';
import { NamespaceParams } from './namespaces.js';

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

/** The namespace's stats from the cache. */
export function namespaceStats(ctx: ConsoleContext, namespace: string) {
  const now = ctx.now();
  const jobsByState = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
  const perJob: Array<{ job: string; state: JobState; runs: number; failures: number; running: number; lastFailureAt: number | null }> = [];
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
    perJob.push({ job: name, state, ...jobRuns(shards, now) });
  }
  const executorsByState = Object.fromEntries(EXECUTOR_STATES.map((s) => [s, 0])) as Record<(typeof EXECUTOR_STATES)[number], number>;
  for (const name of ctx.cache.executorNames(namespace)) {
    const summary = executorSummary(ctx, namespace, name, undefined);
    if (summary) executorsByState[summary.state] += 1;
  }
  const mostFailing = perJob
    .filter((j) => j.failures > 0)
    .sort((a, b) => b.failures - a.failures || b.failures / b.runs - a.failures / a.runs || (b.lastFailureAt ?? 0) - (a.lastFailureAt ?? 0) || (a.job < b.job ? -1 : 1))
    .slice(0, MOST_FAILING_LIMIT);
  return {
    at: now,
    windowMs: STATS_WINDOW_MS,
    jobs: { total: perJob.length, byState: jobsByState },
    executors: { total: ctx.cache.executorNames(namespace).length, byState: executorsByState },
    runs: perJob.map(({ job, runs, failures, running }) => ({ job, runs, failures, running })),
    mostFailing: mostFailing.map(({ job, runs, failures, lastFailureAt }) => ({ job, runs, failures, lastFailureAt })),
    coverage: 'counted from the shard nodes in ZooKeeper, which keep each item\'s last outcome and its run in progress only: at most one run per item in the window (a lower bound); every run is in the executors\' run histories (GET …/jobs/:job/runs)',
  };
}

const Counts = (keys: readonly string[]) => Type.Object(Object.fromEntries(keys.map((k) => [k, Type.Integer()])));
export const StatsSchema = Type.Object({
  at: Type.Integer({ description: 'epoch ms of the answer' }),
  windowMs: Type.Integer(),
  jobs: Type.Object({ total: Type.Integer(), byState: Counts(JOB_STATES) }),
  executors: Type.Object({ total: Type.Integer(), byState: Counts(EXECUTOR_STATES) }),
  runs: Type.Array(Type.Object({ job: Type.String(), runs: Type.Integer(), failures: Type.Integer(), running: Type.Integer() })),
  mostFailing: Type.Array(Type.Object({ job: Type.String(), runs: Type.Integer(), failures: Type.Integer(), lastFailureAt: Type.Union([Type.Integer(), Type.Null()]) })),
  coverage: Type.String({ description: 'what the run counts can and cannot count' }),
});

export const statsRoutes: ConsoleRoutes = async (app, ctx) => {
  app.get('/namespaces/:namespace/stats', {
    schema: { tags: ['namespaces'], summary: 'Jobs and executors by state, runs and failures per job over 24 h (from the shard nodes), the ten most failing jobs', params: NamespaceParams, response: { 200: StatsSchema } },
    config: { access: { level: 'viewer' } },
  }, async (request) => {
    const { namespace } = request.params as { namespace: string };
    if (!ctx.cache.namespace(namespace)) throw new OrreryError('not-found', `namespace '${namespace}' does not exist`, { details: { namespace } });
    return namespaceStats(ctx, namespace);
  });
};
