/**
 * `GET /api/v1/namespaces/:namespace/jobs/:job/shards` (viewer): each item of a job — owner, state,
 * the run in progress, the last outcome and its message, the next fire time (in the job's zone and
 * UTC), and for an unassigned item the allocator's reason with what to do about it.
 *
 * The rule is the store's ({@link describeShards}, the same as `orrery get shards`), fed from the
 * cache: no ZooKeeper round trip. Added here: an enabled job the allocator has not placed yet (no
 * assignment node) says so, since nothing will run it until the allocator does.
 */
import { Type } from '@sinclair/typebox';
import { JobNameSchema, OrreryError, SHARD_MESSAGE_MAX_BYTES, UNASSIGNED_REASONS, type JobConfig, type UnassignedReason } from '@orrery/core';
import type { ConsoleRoutes } from '../app.js';
import type { ConsoleContext } from '../context.js';
import { describeShards, SHARD_ITEM_STATES, type ShardReading, type ShardView, type ShardsView } from '../../store/shards.js';
import { NamespaceNameSchema } from './namespaces.js';

/** `:namespace/:job` path parameters. */
export const JobParams = Type.Object({ namespace: NamespaceNameSchema, job: JobNameSchema }, { additionalProperties: false });

const Zoned = Type.Object({
  at: Type.Integer({ description: 'epoch ms' }),
  local: Type.String({ description: "ISO 8601 with the job zone's offset" }),
  utc: Type.String({ description: 'ISO 8601 in UTC' }),
  timeZone: Type.String(),
});
const Nullable = <T extends import('@sinclair/typebox').TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const ShardItem = Type.Object({
  item: Type.Integer(),
  state: Type.Union(SHARD_ITEM_STATES.map((s) => Type.Literal(s))),
  owner: Nullable(Type.String()),
  running: Nullable(Type.Object({ runId: Type.String(), executor: Type.String(), since: Type.Integer(), attempt: Type.Integer() })),
  failoverPending: Nullable(Type.Object({ runId: Type.String(), executor: Type.String(), markedAt: Type.Integer() })),
  last: Nullable(Type.Object({
    status: Type.String(), message: Type.String({ maxLength: SHARD_MESSAGE_MAX_BYTES }), runId: Type.String(), executor: Type.String(),
    startedAt: Type.Integer(), endedAt: Type.Integer(), durationMs: Type.Integer(), exitCode: Nullable(Type.Integer()),
  })),
  nextFire: Nullable(Zoned),
  unassigned: Type.Optional(Type.Object({ reason: Type.Union([...UNASSIGNED_REASONS, 'not-allocated-yet'].map((r) => Type.Literal(r))), advice: Type.String() })),
  problem: Type.Optional(Type.String()),
});

/** The shards answer. */
export const ShardsSchema = Type.Object({
  job: Type.String(),
  enabled: Type.Boolean(),
  timeZone: Type.String(),
  shardingTotalCount: Type.Integer(),
  assignmentEpoch: Nullable(Type.Integer()),
  assignmentProblem: Type.Optional(Type.String()),
  items: Type.Array(ShardItem),
});

/** The answer when the allocator has not placed an enabled job yet. */
const NOT_ALLOCATED_ADVICE = 'the allocator has not placed this job yet: is orrery-sharding running for this ZooKeeper tree? (see its /healthz)';

/** A job's valid config from the cache; `not-found` or `bad-data` otherwise. */
export function cachedConfig(ctx: ConsoleContext, namespace: string, job: string): JobConfig {
  if (!ctx.cache.namespace(namespace)) throw new OrreryError('not-found', `namespace '${namespace}' does not exist`, { details: { namespace } });
  const cached = ctx.cache.job(namespace, job);
  if (!cached) throw new OrreryError('not-found', `job '${job}' does not exist in namespace '${namespace}'`, { details: { namespace, job } });
  if (!cached.config.ok) throw new OrreryError('bad-data', `job '${job}' cannot be read: its config is ${cached.config.problem}`, { details: { namespace, job } });
  return cached.config.value;
}

/** Why an item is unassigned: the allocator's reason, or that it has not placed the job yet. */
export type ItemUnassignedReason = UnassignedReason | 'not-allocated-yet';
/** A job's items as the API shows them. */
export type ApiShardsView = Omit<ShardsView, 'items'> & { items: Array<Omit<ShardView, 'unassigned'> & { unassigned?: { reason: ItemUnassignedReason; advice: string } }> };

/** A job's items from the cache (see the module header). */
export function cachedShards(ctx: ConsoleContext, namespace: string, job: string): ApiShardsView {
  const config = cachedConfig(ctx, namespace, job);
  const cached = ctx.cache.job(namespace, job)!;
  const shards = new Map<number, ShardReading>();
  for (const [item, parsed] of cached.shards) shards.set(item, parsed.ok ? { ok: true, value: parsed.value } : { ok: false, problem: parsed.problem });
  const assignment = cached.assignment ? (cached.assignment.ok ? { ok: true as const, value: cached.assignment.value } : { ok: false as const, problem: cached.assignment.problem }) : undefined;
  const view = describeShards({ namespace, config, assignment, shards, now: ctx.now() });
  if (cached.assignment || !config.enabled) return view;
  return {
    ...view,
    items: view.items.map((i) => (i.state === 'never-run' && i.item < config.shardingTotalCount
      ? { ...i, state: 'unassigned' as const, unassigned: { reason: 'not-allocated-yet' as const, advice: NOT_ALLOCATED_ADVICE } }
      : i)),
  };
}

export const shardRoutes: ConsoleRoutes = async (app, ctx) => {
  app.get('/namespaces/:namespace/jobs/:job/shards', {
    schema: { tags: ['jobs'], summary: "Each item of a job: owner, state, the run in progress, the last outcome, the next fire time, and why an item is unassigned", params: JobParams, response: { 200: ShardsSchema } },
    config: { access: { level: 'viewer' } },
  }, async (request) => {
    const { namespace, job } = request.params as { namespace: string; job: string };
    return cachedShards(ctx, namespace, job);
  });
};
