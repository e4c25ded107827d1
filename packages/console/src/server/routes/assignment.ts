/**
 * `/api/v1/namespaces/:namespace/assignment`: the current map (job → executor → items, unassigned
 * items with the allocator's reason and what to do) with the load per executor; and
 * `POST …/assignment/preview` (viewer): what the allocator's own `allocate()` would make of a
 * hypothetical change — drain, undrain or remove executors; change jobs' shardingTotalCount,
 * loadLevel, preferList, useDispreferList or enabled; or a requested reshard — as the moves and the
 * loads before and after. Nothing is written. See allocation-view.ts for what a preview guarantees.
 */
import { Type } from '@sinclair/typebox';
import { JobConfigSchema, JobNameSchema, OrreryError, UNASSIGNED_REASONS, validationError, type ValidationIssue } from '@orrery/core';
import type { ConsoleRoutes } from '../app.js';
import type { ConsoleContext } from '../context.js';
import { allocationLoads, allocationMoves, namespaceAllocation, previewAllocation, type AllocationChange } from '../allocation-view.js';
import { unassignedAdvice } from '../../store/shards.js';
import { ExecutorNameSchema } from './executors.js';
import { NamespaceParams } from './namespaces.js';

/** The most entries a preview's lists (jobs, executors, preferList) may hold. */
const MAX_LIST = 1000;
/**
 * The most shards a preview may ask for over the jobs it changes (their new `shardingTotalCount`s
 * added up): `allocate()` runs on the request's time, and a viewer may call it.
 */
export const PREVIEW_MAX_CHANGED_SHARDS = 20_000;
/** Previews one caller may ask for per minute. */
export const PREVIEW_PER_MINUTE = 30;
const Reason = Type.Union(UNASSIGNED_REASONS.map((r) => Type.Literal(r)));
const Unassigned = Type.Array(Type.Object({ item: Type.Integer(), reason: Reason, advice: Type.String() }));
const LoadSchema = Type.Object({ executor: Type.String(), load: Type.Number(), shards: Type.Integer() });

export const AssignmentMap = Type.Object({
  members: Type.Array(Type.String(), { description: 'online, non-drained executors of the last round' }),
  round: Type.Union([Type.Integer(), Type.Null()], { description: 'rounds written for the namespace (null: none yet)' }),
  writtenAt: Type.Union([Type.Integer(), Type.Null()]),
  jobs: Type.Array(Type.Object({
    job: Type.String(),
    enabled: Type.Union([Type.Boolean(), Type.Null()]),
    loadLevel: Type.Union([Type.Integer(), Type.Null()]),
    epoch: Type.Union([Type.Integer(), Type.Null()], { description: 'null: the allocator has not written this job yet' }),
    items: Type.Record(Type.String(), Type.Array(Type.Integer())),
    unassigned: Unassigned,
    problem: Type.Optional(Type.String()),
  })),
  loads: Type.Array(LoadSchema),
});

const JobChangeSchema = Type.Object({
  name: JobNameSchema,
  shardingTotalCount: Type.Optional(JobConfigSchema.properties.shardingTotalCount),
  loadLevel: Type.Optional(JobConfigSchema.properties.loadLevel),
  preferList: Type.Optional(Type.Array(JobConfigSchema.properties.preferList.items, { uniqueItems: true, maxItems: MAX_LIST })),
  useDispreferList: Type.Optional(Type.Boolean()),
  enabled: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

const Executors = Type.Array(ExecutorNameSchema, { uniqueItems: true, maxItems: MAX_LIST });
/** A hypothetical change (every part optional; an empty one previews the allocator's next round as things are). */
export const PreviewBodySchema = Type.Object({
  drain: Type.Optional(Executors),
  undrain: Type.Optional(Executors),
  remove: Type.Optional(Executors),
  jobs: Type.Optional(Type.Array(JobChangeSchema, { maxItems: MAX_LIST })),
  reshard: Type.Optional(Type.Boolean({ description: 'preview a requested reshard (rebalance towards every executor)' })),
}, { additionalProperties: false });

export const PreviewSchema = Type.Object({
  moves: Type.Array(Type.Object({
    job: Type.String(), item: Type.Integer(),
    from: Type.Union([Type.String(), Type.Null()]), to: Type.Union([Type.String(), Type.Null()]),
    why: Type.Optional(Type.String({ description: 'why it has no executor after: an unassigned reason, item-removed or job-disabled' })),
  })),
  loads: Type.Array(Type.Object({ executor: Type.String(), before: Type.Number(), after: Type.Number(), shardsBefore: Type.Integer(), shardsAfter: Type.Integer() })),
  assignment: Type.Record(Type.String(), Type.Object({ items: Type.Record(Type.String(), Type.Array(Type.Integer())), unassigned: Type.Array(Type.Object({ item: Type.Integer(), reason: Reason })) })),
  members: Type.Array(Type.String()),
  notes: Type.Array(Type.String()),
});

/** Problems of a change against what the namespace holds (unknown names, contradictions). */
function changeIssues(ctx: ConsoleContext, namespace: string, change: AllocationChange): { issues: ValidationIssue[]; notes: string[] } {
  const issues: ValidationIssue[] = [];
  const notes: string[] = [];
  const known = new Set(ctx.cache.executorNames(namespace));
  for (const field of ['drain', 'undrain', 'remove'] as const) {
    (change[field] ?? []).forEach((name, i) => {
      if (!known.has(name)) {
        issues.push({ field: `${field}.${i}`, rule: 'known-executor', message: `${field}.${i}: executor '${name}' is not known in namespace '${namespace}' (known-executor)` });
      } else if (!ctx.cache.executor(namespace, name)?.presence) {
        notes.push(`executor '${name}' is offline: to ${field} it changes nothing now`);
      }
    });
  }
  const drain = new Set(change.drain ?? []);
  (change.undrain ?? []).forEach((name, i) => {
    if (drain.has(name)) issues.push({ field: `undrain.${i}`, rule: 'conflict', message: `undrain.${i}: executor '${name}' is also in drain (conflict)` });
  });
  const seen = new Set<string>();
  (change.jobs ?? []).forEach((j, i) => {
    const job = ctx.cache.job(namespace, j.name);
    if (!job) issues.push({ field: `jobs.${i}.name`, rule: 'known-job', message: `jobs.${i}.name: job '${j.name}' does not exist in namespace '${namespace}' (known-job)` });
    else if (!job.config.ok) issues.push({ field: `jobs.${i}.name`, rule: 'readable', message: `jobs.${i}.name: job '${j.name}' has an unreadable config (${job.config.problem}); the allocator ignores it (readable)` });
    if (seen.has(j.name)) issues.push({ field: `jobs.${i}.name`, rule: 'unique', message: `jobs.${i}.name: job '${j.name}' is named twice (unique)` });
    seen.add(j.name);
  });
  return { issues, notes };
}

export const assignmentRoutes: ConsoleRoutes = async (app, ctx) => {
  app.get('/namespaces/:namespace/assignment', {
    schema: { tags: ['assignment'], summary: 'The current assignment (job → executor → items, unassigned items with reasons) and the load per executor', params: NamespaceParams, response: { 200: AssignmentMap } },
    config: { access: { level: 'viewer' } },
  }, async (request) => {
    const { namespace } = request.params as { namespace: string };
    if (!ctx.cache.namespace(namespace)) throw new OrreryError('not-found', `namespace '${namespace}' does not exist`, { details: { namespace } });
    const { cluster, stored } = namespaceAllocation(ctx.cache, namespace);
    const sharding = ctx.cache.sharding(namespace);
    const jobs = ctx.cache.jobNames(namespace).flatMap((name) => {
      const job = ctx.cache.job(namespace, name);
      if (!job) return [];
      const config = job.config.ok ? job.config.value : undefined;
      const assignment = job.assignment?.ok ? job.assignment.value : undefined;
      const problems = [
        ...(job.config.ok ? [] : [`its config is ${job.config.problem}: the allocator ignores it`]),
        ...(job.assignment && !job.assignment.ok ? [`its assignment node is ${job.assignment.problem}`] : []),
      ];
      return [{
        job: name,
        enabled: config?.enabled ?? null,
        loadLevel: config?.loadLevel ?? null,
        epoch: assignment?.epoch ?? null,
        items: assignment?.items ?? {},
        unassigned: (assignment?.unassigned ?? []).map((u) => ({ ...u, advice: config ? unassignedAdvice(u.reason, namespace, config) : '' })),
        ...(problems.length > 0 ? { problem: problems.join('; ') } : {}),
      }];
    });
    return {
      members: stored.members,
      round: sharding?.ok ? sharding.value.round : null,
      writtenAt: sharding?.ok ? sharding.value.writtenAt : null,
      jobs,
      loads: allocationLoads(stored, cluster.jobs),
    };
  });

  app.post('/namespaces/:namespace/assignment/preview', {
    schema: {
      tags: ['assignment'],
      summary: "What the allocator's allocate() would do after a hypothetical change: the moves, and the loads before and after. Nothing is written.",
      params: NamespaceParams,
      body: PreviewBodySchema,
      response: { 200: PreviewSchema },
    },
    config: {
      access: { level: 'viewer' },
      readsOwnWrites: false, // writes nothing
      rateLimit: { max: PREVIEW_PER_MINUTE, timeWindow: 60_000, keyGenerator: (request) => request.principal?.user ?? request.ip },
    },
  }, async (request) => {
    const { namespace } = request.params as { namespace: string };
    const change = request.body as AllocationChange;
    const asked = (change.jobs ?? []).reduce((sum, j) => sum + (j.shardingTotalCount ?? 0), 0);
    if (asked > PREVIEW_MAX_CHANGED_SHARDS) {
      throw validationError([{ field: 'jobs', rule: 'max-shards', message: `jobs: the changed jobs ask for ${asked} shards in all; a preview takes at most ${PREVIEW_MAX_CHANGED_SHARDS}` }], 'preview');
    }
    if (!ctx.cache.namespace(namespace)) throw new OrreryError('not-found', `namespace '${namespace}' does not exist`, { details: { namespace } });
    const { issues, notes } = changeIssues(ctx, namespace, change);
    if (issues.length > 0) throw validationError(issues, 'preview');
    const { cluster, stored, problems } = namespaceAllocation(ctx.cache, namespace);
    for (const p of problems) notes.push(`${p.job ? `job '${p.job}'` : `executor '${p.executor}'`}: ${p.message}`);
    const { cluster: changed, next } = previewAllocation(stored, cluster, change);
    const before = new Map(allocationLoads(stored, cluster.jobs).map((l) => [l.executor, l]));
    const after = new Map(allocationLoads(next, changed.jobs).map((l) => [l.executor, l]));
    const names = [...new Set([...before.keys(), ...after.keys()])].sort();
    return {
      moves: allocationMoves(stored, next, changed),
      loads: names.map((executor) => ({
        executor,
        before: before.get(executor)?.load ?? 0,
        after: after.get(executor)?.load ?? 0,
        shardsBefore: before.get(executor)?.shards ?? 0,
        shardsAfter: after.get(executor)?.shards ?? 0,
      })),
      assignment: next.jobs,
      members: next.members,
      notes,
    };
  });
};
