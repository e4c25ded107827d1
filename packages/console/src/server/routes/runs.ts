/**
 * A job's runs and logs, read from the executors that ran them (store/runs.ts, the CLI's store):
 * - `GET …/jobs/:job/runs?limit=&before=` — merged from every executor, newest first; executors
 *   that could not be asked are named in `unavailable`;
 * - `GET …/jobs/:job/runs/:runId` — one run (a record, or a run in progress);
 * - `GET …/jobs/:job/runs/:runId/log?stream=&offset=` (or one `Range`) — its log, streamed;
 * - `GET …/jobs/:job/runs/:runId/log/stream` — the log tailed live as server-sent events, ending
 *   with `end` (the outcome), `expired` or `executor-offline`.
 * Every route takes `?executor=` as a hint of where the run is. Viewer access. Without a cluster
 * token every route answers 503 naming `ORRERY_CLUSTER_TOKEN`.
 *
 * A log stream counts against the caller's and the console's caps on open streams (app.ts), and
 * re-checks its caller as often as it polls, on every heartbeat and whenever the console's accounts
 * change: once the caller lost access it sends `closed` `{reason: 'access-revoked'}` and ends.
 */
import { Type } from '@sinclair/typebox';
import { JobNameSchema, NODE_NAME_PATTERN, OrreryError, paths, readShard, toError } from '@orrery/core';
import { ACCESS_REVOKED_EVENT, type ConsoleRoutes } from '../app.js';
import type { ConsoleContext } from '../context.js';
import { NamespaceNameSchema } from './namespaces.js';
import {
  DEFAULT_FOLLOW_POLL_MS,
  DEFAULT_RUNS_LIMIT,
  MAX_RUNS_LIMIT,
  RUN_ID_MAX_LENGTH,
  RUN_ID_PATTERN,
  RunViewSchema,
  followLog,
  getRun,
  type LocatedRun,
  inProgressOf,
  listRuns,
  parseByteRange,
  readLog,
  requireClusterToken,
  type FollowEvent,
  type RunDirectory,
  type RunExecutor,
  type RunInProgress,
  type RunsClientOptions,
} from '../../store/runs.js';

/** How often an idle event stream sends a comment, so proxies keep it open, in ms. */
export const SSE_HEARTBEAT_MS = 15_000;

const JobParams = Type.Object({ namespace: NamespaceNameSchema, job: JobNameSchema }, { additionalProperties: false });
const RunParams = Type.Object({
  namespace: NamespaceNameSchema,
  job: JobNameSchema,
  runId: Type.String({ pattern: RUN_ID_PATTERN.source, maxLength: RUN_ID_MAX_LENGTH, description: 'a run id, as listed' }),
}, { additionalProperties: false });
const ExecutorHint = Type.Optional(Type.String({ pattern: NODE_NAME_PATTERN.source, description: 'the executor that ran it, if known (saves asking every executor)' }));
const Stream = Type.Optional(Type.Union([Type.Literal('stdout'), Type.Literal('stderr')], { description: 'default stdout' }));
const Offset = Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'from this byte (default 0)' }));

const Unavailable = Type.Object({
  executor: Type.String(),
  reason: Type.String({ description: 'offline, no-http-api, timeout, unreachable, refused, history-off or bad-answer' }),
  message: Type.String(),
});
export const RunsListing = Type.Object({
  runs: Type.Array(RunViewSchema),
  nextBefore: Type.Union([Type.Integer(), Type.Null()], { description: 'pass as before for the next page; null: no more' }),
  unavailable: Type.Array(Unavailable, { description: 'executors whose runs are missing, and why' }),
});

/**
 * The API's {@link RunDirectory}: the console's cache (no ZooKeeper round trip), but for
 * `inProgressNow` — a run id found nowhere else is looked for in the job's shard nodes themselves,
 * which reach the cache up to a second late (see createConsoleCache).
 */
export function cacheRunDirectory(ctx: ConsoleContext, namespace: string): RunDirectory {
  return {
    async executors() {
      return ctx.cache.executorNames(namespace).flatMap((name): RunExecutor[] => {
        const e = ctx.cache.executor(namespace, name);
        if (!e) return [];
        const httpUrl = e.presence?.ok ? e.presence.value.httpUrl : undefined;
        return [{ name, online: e.presence !== undefined, ...(httpUrl ? { httpUrl } : {}) }];
      });
    },
    async inProgress(job) {
      const cached = ctx.cache.job(namespace, job);
      if (!cached) return [];
      const runs: RunInProgress[] = [];
      for (const [item, shard] of cached.shards) {
        const run = shard.ok ? inProgressOf(job, item, shard.value) : undefined;
        if (run) runs.push(run);
      }
      return runs;
    },
    async inProgressNow(job) {
      const items = [...(ctx.cache.job(namespace, job)?.shards.keys() ?? [])];
      const read = await Promise.all(items.map(async (item) => {
        // A node gone or unreadable meanwhile shows no run (the cache reports what is wrong with it).
        const shard = await readShard(ctx.zk, paths.jobShard(namespace, job, item)).catch(() => undefined);
        return shard ? inProgressOf(job, item, shard.state) : undefined;
      }));
      return read.filter((run): run is RunInProgress => run !== undefined);
    },
  };
}

function assertNamespace(ctx: ConsoleContext, namespace: string): void {
  if (!ctx.cache.namespace(namespace)) throw new OrreryError('not-found', `namespace '${namespace}' does not exist`, { details: { namespace } });
}

/** One SSE event's text (pure): `event`, an `id` when given, and the data as one JSON line. */
export function sseEvent(event: string, data: unknown, id?: string): string {
  return `event: ${event}\n${id !== undefined ? `id: ${id}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}

/** A follower's event as SSE (pure): `log` events carry the next offset as their id (for `Last-Event-ID`). */
export function followEventToSse(event: FollowEvent): string {
  switch (event.type) {
    case 'log':
      return sseEvent('log', { offset: event.offset, next: event.next, text: event.text }, String(event.next));
    case 'end':
      return sseEvent('end', { run: event.run });
    case 'expired':
      return sseEvent('expired', { runId: event.runId, message: event.message });
    case 'executor-offline':
      return sseEvent('executor-offline', { executor: event.executor, message: event.message });
  }
}

export const runRoutes: ConsoleRoutes = async (app, ctx) => {
  const client = (): RunsClientOptions => ({ clusterToken: ctx.clusterToken });

  app.get('/namespaces/:namespace/jobs/:job/runs', {
    schema: {
      tags: ['runs'],
      summary: "A job's runs, merged from every executor of the namespace, newest first (executors that could not be asked are named in unavailable)",
      params: JobParams,
      querystring: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_RUNS_LIMIT, description: `default ${DEFAULT_RUNS_LIMIT}` })),
        before: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'only runs started before this instant (epoch ms): the previous page\'s nextBefore' })),
      }, { additionalProperties: false }),
      response: { 200: RunsListing },
    },
    config: { access: { level: 'viewer' } },
  }, async (request) => {
    const { namespace, job } = request.params as { namespace: string; job: string };
    const query = request.query as { limit?: number; before?: number };
    assertNamespace(ctx, namespace);
    return listRuns(cacheRunDirectory(ctx, namespace), job, { ...(query.limit !== undefined ? { limit: query.limit } : {}), ...(query.before !== undefined ? { before: query.before } : {}) }, client());
  });

  app.get('/namespaces/:namespace/jobs/:job/runs/:runId', {
    schema: {
      tags: ['runs'],
      summary: 'One run: its record from the executor that ran it, or a run in progress (status running)',
      params: RunParams,
      querystring: Type.Object({ executor: ExecutorHint }, { additionalProperties: false }),
      response: { 200: RunViewSchema },
    },
    config: { access: { level: 'viewer' } },
  }, async (request) => {
    const { namespace, job, runId } = request.params as { namespace: string; job: string; runId: string };
    const { executor } = request.query as { executor?: string };
    assertNamespace(ctx, namespace);
    const found = await getRun(cacheRunDirectory(ctx, namespace), job, runId, executor !== undefined ? { executor } : {}, client());
    return found.run;
  });

  app.get('/namespaces/:namespace/jobs/:job/runs/:runId/log', {
    schema: {
      tags: ['runs'],
      summary: "A run's log (text), from offset or one Range: bytes=… (206; 416 past the end). X-Log-Size gives its size",
      params: RunParams,
      querystring: Type.Object({ stream: Stream, offset: Offset, executor: ExecutorHint }, { additionalProperties: false }),
      produces: ['text/plain'],
    },
    config: { access: { level: 'viewer' } },
  }, async (request, reply) => {
    const { namespace, job, runId } = request.params as { namespace: string; job: string; runId: string };
    const query = request.query as { stream?: 'stdout' | 'stderr'; offset?: number; executor?: string };
    assertNamespace(ctx, namespace);
    const range = parseByteRange(request.headers.range);
    const controller = new AbortController();
    request.raw.once('close', () => controller.abort());
    const log = await readLog(cacheRunDirectory(ctx, namespace), job, runId, {
      ...(query.stream ? { stream: query.stream } : {}),
      ...(query.offset !== undefined ? { offset: query.offset } : {}),
      ...(range ? { range } : {}),
      ...(query.executor !== undefined ? { executor: query.executor } : {}),
      signal: controller.signal,
    }, client());
    void reply.header('x-log-size', String(log.size)).header('accept-ranges', 'bytes').header('x-executor', log.executor).header('x-content-type-options', 'nosniff').header('cache-control', 'no-store');
    if (log.contentRange) void reply.header('content-range', log.contentRange);
    if (log.status === 416) return reply.code(416).send();
    void reply.code(log.status).type('text/plain; charset=utf-8');
    if (!log.body) return reply.header('content-length', '0').send('');
    void reply.header('content-length', String(log.length));
    log.body.on('error', (error) => request.log.warn({ err: toError(error), runId }, 'run log forward failed'));
    return reply.send(log.body);
  });

  app.get('/namespaces/:namespace/jobs/:job/runs/:runId/log/stream', {
    schema: {
      tags: ['runs'],
      summary: "A run's log tailed live as server-sent events: log {offset, next, text}…, then one of end {run}, expired, executor-offline. Resumes from Last-Event-ID",
      params: RunParams,
      querystring: Type.Object({ stream: Stream, offset: Offset, executor: ExecutorHint }, { additionalProperties: false }),
      produces: ['text/event-stream'],
    },
    config: { access: { level: 'viewer' } },
  }, async (request, reply) => {
    const { namespace, job, runId } = request.params as { namespace: string; job: string; runId: string };
    const query = request.query as { stream?: 'stdout' | 'stderr'; offset?: number; executor?: string };
    assertNamespace(ctx, namespace);
    requireClusterToken(client());
    const lastEventId = request.headers['last-event-id'];
    let offset = query.offset ?? 0;
    if (typeof lastEventId === 'string' && lastEventId !== '') {
      if (!/^\d{1,15}$/.test(lastEventId)) {
        const message = "header 'last-event-id' must be a byte offset (digits)";
        throw new OrreryError('validation', message, { details: { issues: [{ field: 'last-event-id', rule: 'pattern', message }] } });
      }
      offset = Number(lastEventId);
    }
    const slot = app.streams.open(request);
    const directory = cacheRunDirectory(ctx, namespace);
    // Finding the run comes first: not found, no token, a bad hint are ordinary JSON errors (the
    // follower's first event may be long in coming: a run that prints nothing yet).
    let located: LocatedRun;
    try {
      located = await getRun(directory, job, runId, query.executor !== undefined ? { executor: query.executor } : {}, client());
    } catch (error) {
      slot.release();
      throw error;
    }
    const controller = new AbortController();
    const follower = followLog(directory, job, runId, {
      ...(query.stream ? { stream: query.stream } : {}),
      offset,
      located,
      signal: controller.signal,
    }, client());

    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    let open = true;
    const stop = () => {
      open = false;
      controller.abort();
      slot.release();
    };
    res.on('close', stop);
    res.on('error', stop);
    const write = async (text: string): Promise<void> => {
      if (!open) return;
      if (!res.write(text)) await new Promise<void>((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
    };
    // Runs `then` while the caller may still read; else sends the ending event and ends the stream.
    const recheck = (then?: () => void): void => {
      void slot.allowed().then((ok) => {
        if (!open) return;
        if (ok) return then?.();
        // A client that is not reading gets no goodbye: its connection just closes.
        const stuck = res.writableNeedDrain;
        stop();
        if (stuck) res.destroy();
        else res.end(sseEvent(ACCESS_REVOKED_EVENT.event, ACCESS_REVOKED_EVENT.data));
      });
    };
    const heartbeat = setInterval(() => recheck(() => res.write(': heartbeat\n\n')), SSE_HEARTBEAT_MS);
    const polls = setInterval(() => recheck(), DEFAULT_FOLLOW_POLL_MS);
    // Users, tokens or the session secret changed: the caller may have lost access.
    const off = ctx.cache.on('change', (change) => { if (change.kind === 'console') recheck(); });
    try {
      await write('retry: 3000\n\n');
      let step = await follower.next();
      while (!step.done && open) {
        await write(followEventToSse(step.value));
        step = await follower.next();
      }
    } catch (error) {
      request.log.error({ err: toError(error), runId }, 'run log stream failed');
      await write(sseEvent('error', { code: 'internal', message: `the log stream failed (request ${request.id})` }));
    } finally {
      clearInterval(heartbeat);
      clearInterval(polls);
      off();
      controller.abort();
      await follower.return(undefined).catch(() => undefined); // ends the generator; nothing to report
      if (open) res.end();
      stop();
    }
  });
};
