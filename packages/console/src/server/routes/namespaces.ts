/**
 * `/api/v1/namespaces`: list (with job and executor counts), create, get, update, delete.
 * Reads come from the cache; writes go through the CLI's store functions and are audited.
 */
import { Type } from '@sinclair/typebox';
import { NODE_NAME_PATTERN, NamespaceInfoSchema, OrreryError } from '@orrery/core';
import { hasRole } from '../access.js';
import type { ConsoleRoutes } from '../app.js';
import type { ConsoleContext } from '../context.js';
import { createNamespace, deleteNamespace, updateNamespace } from '../../store/namespaces.js';

/** A namespace name in a path or a body. */
export const NamespaceNameSchema = Type.String({ pattern: NODE_NAME_PATTERN.source, description: "letters, digits, '.', '_' and '-', 1 to 128; not '.', '..' or __proto__" });
/** `:namespace` path parameter. */
export const NamespaceParams = Type.Object({ namespace: NamespaceNameSchema }, { additionalProperties: false });

const Settings = Type.Partial(Type.Omit(NamespaceInfoSchema, ['createdAt']), { additionalProperties: false });

export const NamespaceSummary = Type.Object({
  name: Type.String(),
  version: Type.Integer({ description: 'the settings node version, for a compare-and-set update' }),
  settings: Type.Union([NamespaceInfoSchema, Type.Null()], { description: 'null when the node holds invalid data (see problem)' }),
  problem: Type.Optional(Type.String()),
  jobs: Type.Integer(),
  enabledJobs: Type.Integer(),
  failingJobs: Type.Integer({ description: 'jobs whose last run of some shard failed or timed out' }),
  executors: Type.Object({ online: Type.Integer(), total: Type.Integer() }),
});

/** One namespace's summary, from the cache. */
export function namespaceSummary(ctx: ConsoleContext, name: string) {
  const info = ctx.cache.namespace(name);
  let jobs = 0;
  let enabledJobs = 0;
  let failingJobs = 0;
  for (const job of ctx.cache.jobNames(name)) {
    const cached = ctx.cache.job(name, job);
    if (!cached) continue;
    jobs += 1;
    if (cached.config.ok && cached.config.value.enabled) enabledJobs += 1;
    for (const shard of cached.shards.values()) {
      const status = shard.ok ? shard.value.last?.status : undefined;
      if (status === 'failed' || status === 'timed-out') {
        failingJobs += 1;
        break;
      }
    }
  }
  let online = 0;
  const executorNames = ctx.cache.executorNames(name);
  for (const e of executorNames) if (ctx.cache.executor(name, e)?.presence) online += 1;
  return {
    name,
    version: info?.stat.version ?? 0,
    settings: info?.ok ? info.value : null,
    ...(info && !info.ok ? { problem: info.problem } : {}),
    jobs,
    enabledJobs,
    failingJobs,
    executors: { online, total: executorNames.length },
  };
}

function notFound(name: string): OrreryError {
  return new OrreryError('not-found', `namespace '${name}' does not exist`, { details: { namespace: name } });
}

export const namespaceRoutes: ConsoleRoutes = async (app, ctx) => {
  app.get('/namespaces', {
    schema: { tags: ['namespaces'], summary: 'Namespaces the caller has a role in (every one for an admin), with counts', response: { 200: Type.Object({ namespaces: Type.Array(NamespaceSummary) }) } },
    config: { access: { level: 'user' } },
  }, async (request) => {
    const principal = request.principal!;
    const names = ctx.cache.namespaces().map((n) => n.name).filter((n) => hasRole(principal, n, 'viewer'));
    return { namespaces: names.map((n) => namespaceSummary(ctx, n)) };
  });

  app.post('/namespaces', {
    schema: { tags: ['namespaces'], summary: 'Create a namespace (admin)', body: Type.Composite([Type.Object({ name: NamespaceNameSchema }), Settings], { additionalProperties: false }), response: { 201: NamespaceSummary } },
    config: { access: { level: 'admin' } },
  }, async (request, reply) => {
    const { name, ...settings } = request.body as { name: string } & Record<string, unknown>;
    const info = await createNamespace(ctx.zk, name, settings, ctx.now());
    await ctx.audit.record(request, { action: 'namespace.create', namespace: name, after: info });
    void reply.code(201);
    return { ...namespaceSummary(ctx, name), settings: info, version: 0 };
  });

  app.get('/namespaces/:namespace', {
    schema: { tags: ['namespaces'], summary: 'One namespace', params: NamespaceParams, response: { 200: NamespaceSummary } },
    config: { access: { level: 'viewer' } },
  }, async (request) => {
    const { namespace } = request.params as { namespace: string };
    if (!ctx.cache.namespace(namespace)) throw notFound(namespace);
    return namespaceSummary(ctx, namespace);
  });

  app.put('/namespaces/:namespace', {
    schema: {
      tags: ['namespaces'],
      summary: "Replace a namespace's settings (compare-and-set: send the version you read; 409 with the current one if it changed)",
      params: NamespaceParams,
      body: Type.Object({ version: Type.Integer({ minimum: 0 }), settings: Settings }, { additionalProperties: false }),
      response: { 200: NamespaceSummary },
    },
    config: { access: { level: 'owner' } },
  }, async (request) => {
    const { namespace } = request.params as { namespace: string };
    const { version, settings } = request.body as { version: number; settings: Record<string, unknown> };
    const result = await updateNamespace(ctx.zk, namespace, settings, version);
    await ctx.audit.record(request, { action: 'namespace.update', namespace, before: result.before, after: result.after });
    return { ...namespaceSummary(ctx, namespace), settings: result.after, version: result.version };
  });

  app.delete('/namespaces/:namespace', {
    schema: { tags: ['namespaces'], summary: 'Delete a namespace (admin); refused while it has jobs or online executors', params: NamespaceParams, response: { 204: Type.Null() } },
    config: { access: { level: 'admin' } },
  }, async (request, reply) => {
    const { namespace } = request.params as { namespace: string };
    const before = ctx.cache.namespace(namespace);
    await deleteNamespace(ctx.zk, namespace);
    await ctx.audit.record(request, { action: 'namespace.delete', namespace, before: before?.ok ? before.value : undefined });
    void reply.code(204);
  });
};
