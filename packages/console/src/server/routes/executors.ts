/**
 * `/api/v1/namespaces/:namespace/executors`: list (online / offline / drained, load, shards,
 * version, tags, handlers, host, started), one executor with its shards by job, drain and undrain
 * (operator), and removal of an offline one (owner). Reads come from the cache; writes go through
 * the CLI's store functions and are audited.
 *
 * Load is the sum of the loadLevel of the shards the allocator assigned to the executor (the job
 * assignments), the measure `allocate()` balances.
 */
import { Type } from '@sinclair/typebox';
import { NODE_NAME_PATTERN, OrreryError } from '@orrery/core';
import type { ConsoleRoutes } from '../app.js';
import type { ConsoleContext } from '../context.js';
import { setNoTraffic } from '../../store/executors.js';
import { removeOfflineExecutor } from '../../store/executor-removal.js';
import { NamespaceNameSchema, NamespaceParams } from './namespaces.js';

/** An executor name in a path or a body. */
export const ExecutorNameSchema = Type.String({ pattern: NODE_NAME_PATTERN.source, description: "letters, digits, '.', '_' and '-', 1 to 128; not '.', '..' or __proto__" });
const ExecutorParams = Type.Object({ namespace: NamespaceNameSchema, executor: ExecutorNameSchema }, { additionalProperties: false });

/** The states an executor is shown in. */
export const EXECUTOR_STATES = ['online', 'drained', 'offline'] as const;
/** An executor's state: online (taking shards), drained (online, taking none), offline. */
export type ExecutorState = (typeof EXECUTOR_STATES)[number];

/** The answer of drain and undrain. */
export const DrainAnswerSchema = Type.Object({ executor: Type.String(), drained: Type.Boolean(), changed: Type.Boolean({ description: 'false when it already was' }) });
export const ExecutorSummarySchema = Type.Object({
  name: Type.String(),
  state: Type.Union(EXECUTOR_STATES.map((s) => Type.Literal(s))),
  /** The drain flag (meta noTraffic), also kept while offline. */
  drained: Type.Boolean(),
  leaving: Type.Boolean({ description: 'shutting down gracefully (its shards move away)' }),
  load: Type.Number({ description: "sum of its assigned shards' loadLevel" }),
  shards: Type.Integer(),
  host: Type.Union([Type.String(), Type.Null()]),
  pid: Type.Union([Type.Integer(), Type.Null()]),
  version: Type.Union([Type.String(), Type.Null()]),
  startedAt: Type.Union([Type.Integer(), Type.Null()], { description: 'epoch ms' }),
  tags: Type.Array(Type.String()),
  handlers: Type.Array(Type.String()),
  problem: Type.Optional(Type.String()),
});
export const ExecutorDetailSchema = Type.Composite([ExecutorSummarySchema, Type.Object({
  jobs: Type.Array(Type.Object({
    job: Type.String(),
    items: Type.Array(Type.Integer()),
    loadLevel: Type.Integer(),
    load: Type.Number(),
    running: Type.Array(Type.Integer(), { description: 'items this executor is running now' }),
  })),
})]);

interface Held {
  load: number;
  shards: number;
  jobs: Map<string, { items: number[]; loadLevel: number }>;
}

/** Executor → what the job assignments give it (from the cache). */
export function heldByExecutor(ctx: ConsoleContext, namespace: string): Map<string, Held> {
  const out = new Map<string, Held>();
  for (const name of ctx.cache.jobNames(namespace)) {
    const job = ctx.cache.job(namespace, name);
    if (!job?.config.ok || !job.assignment?.ok) continue;
    const loadLevel = job.config.value.loadLevel;
    for (const [executor, items] of Object.entries(job.assignment.value.items)) {
      let held = out.get(executor);
      if (!held) out.set(executor, (held = { load: 0, shards: 0, jobs: new Map() }));
      held.load += items.length * loadLevel;
      held.shards += items.length;
      held.jobs.set(name, { items, loadLevel });
    }
  }
  return out;
}

/** One executor's summary from the cache (undefined: unknown). */
export function executorSummary(ctx: ConsoleContext, namespace: string, name: string, held: Held | undefined) {
  const e = ctx.cache.executor(namespace, name);
  if (!e) return undefined;
  const info = e.presence?.ok ? e.presence.value : undefined;
  const problems: string[] = [];
  if (e.presence && !e.presence.ok) problems.push(`presence is ${e.presence.problem}`);
  if (e.presence && e.presence.stat.ephemeralOwner === '0') problems.push('presence is not ephemeral (written by hand?): no executor session holds it');
  if (e.meta && !e.meta.ok) problems.push(`meta is ${e.meta.problem}`);
  const drained = e.meta?.ok ? e.meta.value.noTraffic : false;
  const leaving = info?.leaving === true;
  const state: ExecutorState = !e.presence ? 'offline' : drained || leaving ? 'drained' : 'online';
  return {
    name,
    state,
    drained,
    leaving,
    load: held?.load ?? 0,
    shards: held?.shards ?? 0,
    host: info?.host ?? null,
    pid: info?.pid ?? null,
    version: info?.version ?? null,
    startedAt: info?.startedAt ?? null,
    tags: info?.tags ?? [],
    handlers: info?.handlers ?? [],
    ...(problems.length > 0 ? { problem: problems.join('; ') } : {}),
  };
}

function assertNamespace(ctx: ConsoleContext, namespace: string): void {
  if (!ctx.cache.namespace(namespace)) throw new OrreryError('not-found', `namespace '${namespace}' does not exist`, { details: { namespace } });
}
function unknownExecutor(namespace: string, executor: string): OrreryError {
  return new OrreryError('not-found', `executor '${executor}' is not known in namespace '${namespace}'`, { details: { namespace, executor } });
}

export const executorRoutes: ConsoleRoutes = async (app, ctx) => {
  app.get('/namespaces/:namespace/executors', {
    schema: { tags: ['executors'], summary: 'Every executor the namespace knows: state, load, shards, version, tags, handlers', params: NamespaceParams, response: { 200: Type.Object({ executors: Type.Array(ExecutorSummarySchema) }) } },
    config: { access: { level: 'viewer' } },
  }, async (request) => {
    const { namespace } = request.params as { namespace: string };
    assertNamespace(ctx, namespace);
    const held = heldByExecutor(ctx, namespace);
    return { executors: ctx.cache.executorNames(namespace).flatMap((name) => executorSummary(ctx, namespace, name, held.get(name)) ?? []) };
  });

  app.get('/namespaces/:namespace/executors/:executor', {
    schema: { tags: ['executors'], summary: 'One executor, with its shards by job and the items it runs now', params: ExecutorParams, response: { 200: ExecutorDetailSchema } },
    config: { access: { level: 'viewer' } },
  }, async (request) => {
    const { namespace, executor } = request.params as { namespace: string; executor: string };
    assertNamespace(ctx, namespace);
    const held = heldByExecutor(ctx, namespace).get(executor);
    const summary = executorSummary(ctx, namespace, executor, held);
    if (!summary) throw unknownExecutor(namespace, executor);
    const jobs = new Map([...(held?.jobs ?? new Map<string, { items: number[]; loadLevel: number }>())].map(([job, h]) => [job, { job, items: h.items, loadLevel: h.loadLevel, load: h.items.length * h.loadLevel, running: [] as number[] }]));
    // Items it runs now, including those of jobs it no longer holds (a drained executor finishes its runs).
    for (const name of ctx.cache.jobNames(namespace)) {
      const job = ctx.cache.job(namespace, name);
      if (!job) continue;
      for (const [item, shard] of job.shards) {
        if (!shard.ok || shard.value.state !== 'running' || shard.value.executor !== executor) continue;
        let entry = jobs.get(name);
        if (!entry) jobs.set(name, (entry = { job: name, items: [], loadLevel: job.config.ok ? job.config.value.loadLevel : 1, load: 0, running: [] }));
        entry.running.push(item);
      }
    }
    for (const entry of jobs.values()) entry.running.sort((a, b) => a - b);
    return { ...summary, jobs: [...jobs.values()].sort((a, b) => (a.job < b.job ? -1 : 1)) };
  });

  for (const [verb, noTraffic] of [['drain', true], ['undrain', false]] as const) {
    app.post(`/namespaces/:namespace/executors/:executor/${verb}`, {
      schema: {
        tags: ['executors'],
        summary: noTraffic ? 'Drain an executor: it gets no shards and loses its own (its runs finish)' : 'Undrain an executor: it takes shards again',
        params: ExecutorParams,
        response: { 200: DrainAnswerSchema },
      },
      config: { access: { level: 'operator' } },
    }, async (request) => {
      const { namespace, executor } = request.params as { namespace: string; executor: string };
      const changed = await setNoTraffic(ctx.zk, namespace, executor, noTraffic);
      if (changed) await ctx.audit.record(request, { action: `executor.${verb}`, namespace, target: executor, before: { noTraffic: !noTraffic }, after: { noTraffic } });
      return { executor, drained: noTraffic, changed };
    });
  }

  app.delete('/namespaces/:namespace/executors/:executor', {
    schema: { tags: ['executors'], summary: 'Remove an offline executor (its node, drain flag and summary); 409 while it is online', params: ExecutorParams, response: { 204: Type.Null() } },
    config: { access: { level: 'owner' } },
  }, async (request, reply) => {
    const { namespace, executor } = request.params as { namespace: string; executor: string };
    const before = ctx.cache.executor(namespace, executor);
    await removeOfflineExecutor(ctx.zk, namespace, executor);
    await ctx.audit.record(request, { action: 'executor.remove', namespace, target: executor, before: { drained: before?.meta?.ok ? before.meta.value.noTraffic : false } });
    void reply.code(204);
  });
};
