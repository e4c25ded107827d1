/**
 * `/api/v1/namespaces/:namespace/jobs`: list (filter, page), create, get, update (compare-and-set),
 * delete, copy, enable, disable, run, stop, and batch enable/disable/run/delete.
 *
 * Reads come from the cache (no ZooKeeper round trip); writes go through the store functions the
 * CLI uses (store/jobs.ts), name the caller as the author of the config version they write (its
 * history), and are audited. Access: viewer reads; operator enables, disables, runs and stops;
 * owner creates, updates, deletes and copies (a batch delete needs owner too).
 */
import { Type, type TSchema } from '@sinclair/typebox';
import {
  AssignmentSchema,
  JOB_CONFIG_MAX_BYTES,
  JobConfigSchema,
  JobNameSchema,
  OrreryError,
  errorCode,
  hasErrorCode,
  toError,
  validationError,
  type ValidationIssue,
} from '@orrery/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hasRole } from '../access.js';
import type { ConsoleRoutes } from '../app.js';
import type { ConsoleContext } from '../context.js';
import { createJobPageMemo, createScheduleMemo, JOB_PAGE_DEFAULT, JOB_PAGE_MAX, JOB_STATES, listItem, type JobListPage, type JobListQuery } from '../job-list.js';
import {
  copyJob,
  createJob,
  deleteJob,
  isBrokenJob,
  readJobEntry,
  runJobNow,
  setJobEnabled,
  stopJob,
  updateJob,
  type JobWriteOptions,
} from '../../store/jobs.js';
import { NamespaceNameSchema, NamespaceParams } from './namespaces.js';

/** The largest body of a job create or update: a whole config (256 KiB stored) with room for formatting. */
export const JOB_BODY_LIMIT = 2 * JOB_CONFIG_MAX_BYTES;
/** The largest body of a run (its `param` may hold 64 KiB). */
export const RUN_BODY_LIMIT = 128 * 1024;
/** The most jobs one batch may name. */
export const BATCH_MAX_NAMES = 1000;
/** The largest body of a batch ({@link BATCH_MAX_NAMES} names). */
export const BATCH_BODY_LIMIT = 128 * 1024;

/** `:namespace/:job` path parameters. */
export const JobRouteParams = Type.Object({ namespace: NamespaceNameSchema, job: JobNameSchema }, { additionalProperties: false });

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * A job config as sent: any object, judged by core's `checkJobConfig` (every problem at once, each
 * naming its field and rule, with the field meant for an unknown one) rather than by the request
 * schema, so that the console and the CLI give the same answers.
 */
export const JobConfigInputSchema = Type.Object({}, { additionalProperties: true, description: 'A JobConfig (see the JobConfig schema: name, type, command or handler, cron, …); validated by checkJobConfig, every problem listed at once' });

const Item = Type.Integer({ minimum: 0, maximum: 99_999 });
const Items = Type.Array(Item, { minItems: 1, maxItems: 10_000, uniqueItems: true, description: 'only these items (default: all)' });

const Outcome = Type.Object({ item: Type.Integer(), status: Type.String(), endedAt: Type.Integer(), durationMs: Type.Integer(), executor: Type.String(), message: Type.String() });
const StateSummary = Type.Object({
  running: Type.Integer({ description: 'items running now' }),
  failing: Type.Integer({ description: 'items whose last run failed or timed out' }),
  succeeded: Type.Integer({ description: 'items whose last run succeeded' }),
  unreadable: Type.Integer({ description: 'items whose shard node cannot be read' }),
});
export const ListItem = Type.Object({
  name: Type.String(),
  broken: Type.Boolean({ description: 'the stored config is not valid (see problem)' }),
  version: Type.Integer(),
  problem: Type.Optional(Type.String()),
  type: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  cron: Type.Optional(Nullable(Type.String())),
  timeZone: Type.Optional(Type.String()),
  nextFireTime: Type.Optional(Nullable(Type.Integer({ description: 'epoch ms; null for a disabled or passive job' }))),
  enabled: Type.Optional(Type.Boolean()),
  groups: Type.Optional(Type.Array(Type.String())),
  shardCount: Type.Optional(Type.Integer()),
  localMode: Type.Optional(Type.Boolean()),
  summary: Type.Optional(StateSummary),
  lastOutcomes: Type.Optional(Type.Array(Outcome)),
});
export const ListAnswer = Type.Object({
  total: Type.Integer({ description: 'jobs that pass the filter' }),
  limit: Type.Integer(),
  offset: Type.Integer(),
  cursor: Nullable(Type.String()),
  nextCursor: Nullable(Type.String({ description: 'pass as cursor for the next page; null on the last page' })),
  filter: Type.Object({ name: Nullable(Type.String()), group: Nullable(Type.String()), state: Nullable(Type.String()) }),
  items: Type.Array(ListItem),
});
const ListQuery = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'jobs whose name contains this (case-insensitive)' })),
  group: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  state: Type.Optional(Type.Union(JOB_STATES.map((s) => Type.Literal(s)))),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: JOB_PAGE_MAX, default: JOB_PAGE_DEFAULT })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  cursor: Type.Optional(JobNameSchema),
}, { additionalProperties: false });

/** A job as `GET /:job` (and every write) answers it. */
export const JobAnswer = Type.Object({
  name: Type.String(),
  version: Type.Integer({ description: 'the config node version: send it with a PUT (compare-and-set)' }),
  config: Nullable(JobConfigSchema),
  problem: Type.Optional(Type.String({ description: 'why the stored config is not valid (config is null)' })),
  assignment: Nullable(Type.Object({ epoch: Type.Integer(), items: Type.Record(Type.String(), Type.Array(Type.Integer())), unassigned: AssignmentSchema.properties.unassigned, writtenAt: Type.Integer() })),
  assignmentProblem: Type.Optional(Type.String()),
  summary: Nullable(StateSummary),
  nextFireTime: Nullable(Type.Integer()),
});
export const WriteAnswer = Type.Object({ name: Type.String(), version: Type.Integer(), config: JobConfigSchema, changed: Type.Boolean() });

const BATCH_ACTIONS = ['enable', 'disable', 'run', 'delete'] as const;
type BatchAction = (typeof BATCH_ACTIONS)[number];
const BatchBody = Type.Object({
  action: Type.Union(BATCH_ACTIONS.map((a) => Type.Literal(a))),
  names: Type.Array(JobNameSchema, { minItems: 1, maxItems: BATCH_MAX_NAMES, uniqueItems: true }),
  force: Type.Optional(Type.Boolean({ description: 'delete only: delete enabled jobs too (each disabled first)' })),
}, { additionalProperties: false });
export const BatchAnswer = Type.Object({
  action: Type.String(),
  results: Type.Array(Type.Object({
    name: Type.String(),
    outcome: Type.Union([Type.Literal('done'), Type.Literal('unchanged'), Type.Literal('failed')]),
    error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  })),
});

/** The caller as the author of the config versions it writes, and the console's log for history failures. */
export function writerOf(ctx: ConsoleContext, request: FastifyRequest): JobWriteOptions {
  return { author: request.principal?.user ?? 'unknown', logger: ctx.logger, now: ctx.now };
}

function namespaceNotFound(namespace: string): OrreryError {
  return new OrreryError('not-found', `namespace '${namespace}' does not exist`, { details: { namespace } });
}

/** Throws `not-found` unless the cache knows the namespace. */
export function assertCachedNamespace(ctx: ConsoleContext, namespace: string): void {
  if (!ctx.cache.namespace(namespace)) throw namespaceNotFound(namespace);
}

/** The validation error of a config sent inside a body under `field`, its issues named from the body. */
export function underField(error: unknown, field: string): unknown {
  if (!hasErrorCode(error, 'validation')) return error;
  const issues = (error.details.issues as ValidationIssue[] | undefined) ?? [];
  return validationError(issues.map((i) => ({ ...i, field: i.field ? `${field}.${i.field}` : field, message: `${field}.${i.message}` })), 'request');
}

/** A job from the cache as the API answers it. */
export function jobAnswer(ctx: ConsoleContext, namespace: string, name: string, schedules = createScheduleMemo(1)) {
  assertCachedNamespace(ctx, namespace);
  const job = ctx.cache.job(namespace, name);
  if (!job) throw new OrreryError('not-found', `job '${name}' does not exist in namespace '${namespace}'`, { details: { namespace, job: name } });
  const item = listItem(job, schedules, ctx.now());
  const assignment = job.assignment?.ok ? job.assignment.value : undefined;
  return {
    name,
    version: job.config.stat.version,
    config: job.config.ok ? job.config.value : null,
    ...(job.config.ok ? {} : { problem: job.config.problem }),
    assignment: assignment ? { epoch: assignment.epoch, items: assignment.items, unassigned: assignment.unassigned, writtenAt: assignment.writtenAt } : null,
    ...(job.assignment && !job.assignment.ok ? { assignmentProblem: job.assignment.problem } : {}),
    summary: item.broken ? null : item.summary,
    nextFireTime: item.broken ? null : item.nextFireTime,
  };
}

/** What a batch may not do to one job, or undefined when it may (reads the job from ZooKeeper). */
async function batchProblem(ctx: ConsoleContext, namespace: string, name: string, index: number, action: BatchAction, force: boolean): Promise<ValidationIssue | undefined> {
  const field = `names[${index}]`;
  const entry = await readJobEntry(ctx.zk, namespace, name);
  if (!entry) return { field, rule: 'exists', message: `${field}: no job named '${name}' in namespace '${namespace}'` };
  if (action === 'delete') {
    if (!force && !isBrokenJob(entry) && entry.config.enabled) return { field, rule: 'disabled', message: `${field}: job '${name}' is enabled; disable it first or send force: true` };
    return undefined;
  }
  if (isBrokenJob(entry)) return { field, rule: 'readable', message: `${field}: job '${name}' is broken (its config is ${entry.problem}); it can only be deleted or replaced` };
  if (action === 'run' && !entry.config.enabled) return { field, rule: 'enabled', message: `${field}: job '${name}' is disabled; enable it first` };
  return undefined;
}

/** A POST without a body is one with an empty object (run and stop take all their fields as optional). */
async function noBodyIsEmpty(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}

export const jobRoutes: ConsoleRoutes = async (app, ctx) => {
  const schedules = createScheduleMemo();
  const pages = createJobPageMemo();
  const base = '/namespaces/:namespace/jobs';

  app.get(base, {
    schema: { tags: ['jobs'], summary: "A namespace's jobs, sorted by name: filter by name, group and state; page by offset or cursor", params: NamespaceParams, querystring: ListQuery, response: { 200: ListAnswer } },
    config: { access: { level: 'viewer' } },
  }, async (request, reply) => {
    const { namespace } = request.params as { namespace: string };
    assertCachedNamespace(ctx, namespace);
    // Rendered by the route's own serializer, so a page from the memo is byte for byte what Fastify would send.
    const serialize = reply.getSerializationFunction('200');
    const render = serialize ? (page: JobListPage) => serialize(page as unknown as Record<string, unknown>) : JSON.stringify;
    const body = pages.body(ctx.cache, namespace, request.query as JobListQuery, schedules, ctx.now(), render);
    return (reply as FastifyReply).type('application/json; charset=utf-8').send(body);
  });

  app.post(base, {
    bodyLimit: JOB_BODY_LIMIT,
    schema: { tags: ['jobs'], summary: 'Create a job (owner); it is created as its config says (disabled by default)', params: NamespaceParams, body: JobConfigInputSchema, response: { 201: WriteAnswer } },
    config: { access: { level: 'owner' } },
  }, async (request, reply) => {
    const { namespace } = request.params as { namespace: string };
    assertCachedNamespace(ctx, namespace);
    const written = await createJob(ctx.zk, namespace, request.body, writerOf(ctx, request));
    await ctx.audit.record(request, { action: 'job.create', namespace, job: written.config.name, after: written.config });
    void reply.code(201);
    return { name: written.config.name, version: written.version, config: written.config, changed: true };
  });

  app.get(`${base}/:job`, {
    schema: { tags: ['jobs'], summary: 'One job: its config with the version to send back with a PUT, its assignment and item states', params: JobRouteParams, response: { 200: JobAnswer } },
    config: { access: { level: 'viewer' } },
  }, async (request) => {
    const { namespace, job } = request.params as { namespace: string; job: string };
    return jobAnswer(ctx, namespace, job, schedules);
  });

  app.put(`${base}/:job`, {
    bodyLimit: JOB_BODY_LIMIT,
    schema: {
      tags: ['jobs'],
      summary: "Replace a job's config (owner). Compare-and-set: send the version you read; a stale one gets 409 with the current version and config, and nothing is written",
      params: JobRouteParams,
      body: Type.Object({ version: Type.Integer({ minimum: 0, maximum: 2_147_483_647 }), config: JobConfigInputSchema }, { additionalProperties: false }),
      response: { 200: WriteAnswer },
    },
    config: { access: { level: 'owner' } },
  }, async (request) => {
    const { namespace, job } = request.params as { namespace: string; job: string };
    const { version, config } = request.body as { version: number; config: Record<string, unknown> };
    assertCachedNamespace(ctx, namespace);
    let written;
    try {
      written = await updateJob(ctx.zk, namespace, job, config, version, writerOf(ctx, request));
    } catch (error) {
      throw underField(error, 'config');
    }
    if (written.changed) await ctx.audit.record(request, { action: 'job.update', namespace, job, before: written.before, after: written.config, details: { version: written.version } });
    return { name: job, version: written.version, config: written.config, changed: written.changed };
  });

  app.delete(`${base}/:job`, {
    schema: {
      tags: ['jobs'], summary: 'Delete a job and its history (owner); refused while it is enabled unless force=true (then it is disabled first)',
      params: JobRouteParams, querystring: Type.Object({ force: Type.Optional(Type.Boolean()) }, { additionalProperties: false }), response: { 204: Type.Null() },
    },
    config: { access: { level: 'owner' } },
  }, async (request, reply) => {
    const { namespace, job } = request.params as { namespace: string; job: string };
    const { force } = request.query as { force?: boolean };
    assertCachedNamespace(ctx, namespace);
    const before = ctx.cache.job(namespace, job)?.config;
    await deleteJob(ctx.zk, namespace, job, { force: force === true, ...writerOf(ctx, request) });
    await ctx.audit.record(request, { action: 'job.delete', namespace, job, before: before?.ok ? before.value : undefined, details: { force: force === true } });
    void reply.code(204);
  });

  app.post(`${base}/:job/copy`, {
    schema: { tags: ['jobs'], summary: 'Copy a job under a new name, disabled (owner)', params: JobRouteParams, body: Type.Object({ name: JobNameSchema }, { additionalProperties: false }), response: { 201: WriteAnswer } },
    config: { access: { level: 'owner' } },
  }, async (request, reply) => {
    const { namespace, job } = request.params as { namespace: string; job: string };
    const { name } = request.body as { name: string };
    assertCachedNamespace(ctx, namespace);
    const written = await copyJob(ctx.zk, namespace, job, name, writerOf(ctx, request));
    await ctx.audit.record(request, { action: 'job.copy', namespace, job: name, after: written.config, details: { from: job } });
    void reply.code(201);
    return { name, version: written.version, config: written.config, changed: true };
  });

  for (const verb of ['enable', 'disable'] as const) {
    app.post(`${base}/:job/${verb}`, {
      schema: { tags: ['jobs'], summary: `${verb === 'enable' ? 'Enable' : 'Disable'} a job (operator)`, params: JobRouteParams, response: { 200: Type.Object({ name: Type.String(), enabled: Type.Boolean(), changed: Type.Boolean() }) } },
      config: { access: { level: 'operator' } },
    }, async (request) => {
      const { namespace, job } = request.params as { namespace: string; job: string };
      assertCachedNamespace(ctx, namespace);
      const changed = await setJobEnabled(ctx.zk, namespace, job, verb === 'enable', writerOf(ctx, request));
      if (changed) await ctx.audit.record(request, { action: `job.${verb}`, namespace, job, before: { enabled: verb !== 'enable' }, after: { enabled: verb === 'enable' } });
      return { name: job, enabled: verb === 'enable', changed };
    });
  }

  app.post(`${base}/:job/run`, {
    bodyLimit: RUN_BODY_LIMIT,
    preValidation: noBodyIsEmpty,
    schema: {
      tags: ['jobs'], summary: "Run a job's items now (operator): the owners of the items run them within a second",
      params: JobRouteParams,
      body: Type.Object({ items: Type.Optional(Items), param: Type.Optional(Type.String({ maxLength: 65_536, description: 'overrides the job parameter for these runs' })) }, { additionalProperties: false }),
      response: { 202: Type.Object({ name: Type.String(), executors: Type.Array(Type.String({ description: 'the online executors asked to run it' })) }) },
    },
    config: { access: { level: 'operator' } },
  }, async (request, reply) => {
    const { namespace, job } = request.params as { namespace: string; job: string };
    const { items, param } = (request.body ?? {}) as { items?: number[]; param?: string };
    assertCachedNamespace(ctx, namespace);
    const result = await runJobNow(ctx.zk, namespace, job, { ...(items ? { items } : {}), ...(param !== undefined ? { param } : {}), requestedBy: request.principal!.user });
    await ctx.audit.record(request, { action: 'job.run', namespace, job, details: { items: items ?? null, param: param ?? null, executors: result.executors } });
    void reply.code(202);
    return { name: job, executors: result.executors };
  });

  app.post(`${base}/:job/stop`, {
    preValidation: noBodyIsEmpty,
    schema: {
      tags: ['jobs'], summary: "Stop a job's runs in progress (operator; their outcome is `aborted`)",
      params: JobRouteParams,
      body: Type.Object({ items: Type.Optional(Items) }, { additionalProperties: false }),
      response: { 202: Type.Object({ name: Type.String() }) },
    },
    config: { access: { level: 'operator' } },
  }, async (request, reply) => {
    const { namespace, job } = request.params as { namespace: string; job: string };
    const { items } = (request.body ?? {}) as { items?: number[] };
    assertCachedNamespace(ctx, namespace);
    await stopJob(ctx.zk, namespace, job, { ...(items ? { items } : {}), requestedBy: request.principal!.user });
    await ctx.audit.record(request, { action: 'job.stop', namespace, job, details: { items: items ?? null } });
    void reply.code(202);
    return { name: job };
  });

  const batch = async (request: FastifyRequest) => {
    const { namespace } = request.params as { namespace: string };
    const { action, names, force } = request.body as { action: BatchAction; names: string[]; force?: boolean };
    if (action === 'delete' && !hasRole(request.principal!, namespace, 'owner')) {
      throw new OrreryError('forbidden', `${request.principal!.user} may not delete jobs: it needs the role owner of namespace '${namespace}'`, { details: { need: 'owner', namespace } });
    }
    assertCachedNamespace(ctx, namespace);
    // All or nothing: every job is checked before the first write, every problem listed.
    const problems = (await Promise.all(names.map((name, i) => batchProblem(ctx, namespace, name, i, action, force === true)))).filter((p): p is ValidationIssue => p !== undefined);
    if (problems.length > 0) {
      const error = validationError(problems, `batch ${action}`);
      throw new OrreryError('validation', `${error.message}; nothing was done`, { details: error.details });
    }
    const writer = writerOf(ctx, request);
    const results: Array<{ name: string; outcome: 'done' | 'unchanged' | 'failed'; error?: { code: string; message: string } }> = [];
    for (const name of names) {
      try {
        if (action === 'enable' || action === 'disable') {
          const changed = await setJobEnabled(ctx.zk, namespace, name, action === 'enable', writer);
          results.push({ name, outcome: changed ? 'done' : 'unchanged' });
          if (changed) await ctx.audit.record(request, { action: `job.${action}`, namespace, job: name, before: { enabled: action !== 'enable' }, after: { enabled: action === 'enable' }, details: { batch: true } });
        } else if (action === 'run') {
          const result = await runJobNow(ctx.zk, namespace, name, { requestedBy: request.principal!.user });
          results.push({ name, outcome: 'done' });
          await ctx.audit.record(request, { action: 'job.run', namespace, job: name, details: { batch: true, executors: result.executors } });
        } else {
          const before = ctx.cache.job(namespace, name)?.config;
          await deleteJob(ctx.zk, namespace, name, { force: force === true, ...writer });
          results.push({ name, outcome: 'done' });
          await ctx.audit.record(request, { action: 'job.delete', namespace, job: name, before: before?.ok ? before.value : undefined, details: { batch: true, force: force === true } });
        }
      } catch (error) {
        // Validated already: what fails now changed meanwhile (or the cluster said no); the others go on.
        const e = toError(error);
        const code = errorCode(e) ?? 'internal';
        if (code === 'internal' || code === 'bad-data') ctx.logger.error({ err: e, namespace, job: name, action }, 'batch action failed');
        results.push({ name, outcome: 'failed', error: { code, message: code === 'internal' ? 'internal error; see the console log' : e.message } });
      }
    }
    return { action, results };
  };
  const batchRoute = {
    bodyLimit: BATCH_BODY_LIMIT,
    schema: {
      tags: ['jobs'],
      summary: 'Enable, disable, run or delete several jobs (operator; delete: owner). All or nothing: every job is checked first and every problem listed; then one write per job, each outcome answered',
      params: NamespaceParams, body: BatchBody, response: { 200: BatchAnswer },
    },
    config: { access: { level: 'operator' as const } },
  };
  app.post(`${base}::batch`, batchRoute, batch);
  app.post(`${base}/batch`, batchRoute, batch);
};

