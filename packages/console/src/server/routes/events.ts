/**
 * `GET /api/v1/namespaces/:namespace/events` (viewer): the namespace's changes — jobs, shards,
 * executors, assignments, the namespace itself — as server-sent events, from the cache's `change`
 * events, so the UI refreshes what changed without polling.
 *
 * What it guarantees:
 * - **Coalesced**: at most one event per thing (a job, a shard item, an executor, an assignment)
 *   per {@link EVENTS_COALESCE_MS}; a burst of writes is one event, sent after the window. Events
 *   say what changed (`kind`, `job`, `executor`, `item`, `deleted`), not its new value: a client
 *   reads it again (from the cache, so at no ZooKeeper cost).
 * - A heartbeat comment every {@link EVENTS_HEARTBEAT_MS}, so proxies keep the connection and
 *   clients notice a dead one.
 * - **Bounded**: a client that does not read is dropped (its connection closed) once more than
 *   {@link EVENTS_MAX_BUFFERED_BYTES} wait for it, never buffered without end; it reconnects and
 *   reads again.
 * - **Re-checked**: the caller is authenticated again and its role re-checked (from the cache) on
 *   every heartbeat, before every flush and whenever the console's accounts change (users, tokens,
 *   the session secret); once it fails, the stream sends `closed` `{reason: 'access-revoked'}`
 *   and ends. Each stream counts against the caller's and the console's caps (app.ts).
 * - Cleaned up on disconnect (and when the console closes): the cache listener, timers and the
 *   stream's slot go.
 * Not guaranteed: delivery of every change (a reconnecting client re-reads what it shows), and
 * order between different things within one window.
 */
import type { Writable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { OrreryError, toError } from '@orrery/core';
import { ACCESS_REVOKED_EVENT, type ConsoleRoutes } from '../app.js';
import type { CacheChange } from '../console-cache.js';
import type { ConsoleContext } from '../context.js';
import { NamespaceParams } from './namespaces.js';

/** At most one event per thing per this many ms. */
export const EVENTS_COALESCE_MS = 100;
/** A heartbeat comment every this many ms. */
export const EVENTS_HEARTBEAT_MS = 15_000;
/** A client with more than this many bytes waiting for it is dropped. */
export const EVENTS_MAX_BUFFERED_BYTES = 256 * 1024;
/** The reconnection delay suggested to clients (the SSE `retry` field), in ms. */
export const EVENTS_RETRY_MS = 3_000;

/** Options of {@link createSseChannel} and {@link createEventRoutes}. */
export interface SseOptions {
  coalesceMs?: number;
  heartbeatMs?: number;
  maxBufferedBytes?: number;
}

/** One event as sent: its SSE event name and its JSON data. */
export interface SseEvent {
  event: string;
  data: unknown;
}

/** A stream of server-sent events to one client. */
export interface SseChannel {
  /** Queues a change under `key`; changes with the same key within a window are sent once. */
  push(key: string, render: () => SseEvent): void;
  /** Writes an event now (not coalesced). */
  send(event: SseEvent): void;
  /** Asks `authorize` again now (it is asked on every heartbeat and flush anyway). */
  recheck(): void;
  readonly closed: boolean;
  /** Stops timers and writes; idempotent. */
  close(): void;
}

/** Options of one {@link createSseChannel} beyond its timings. */
export interface SseChannelHooks {
  /** Called once when the channel closes the client for being slow. */
  onDrop?: () => void;
  /** Called once when the channel closes, for whatever reason. */
  onClose?: () => void;
  /**
   * Whether the client may still read (asked on every heartbeat, before every flush, and on
   * {@link SseChannel.recheck}); once it says false (or fails), the channel sends
   * {@link ACCESS_REVOKED_EVENT} and ends the response. Default: always.
   */
  authorize?: () => Promise<boolean>;
}

/**
 * Creates the per-client channel over `out` (the response): coalescing, heartbeat, the buffer
 * bound and the access re-checks of the module header.
 */
export function createSseChannel(out: Writable, options: SseOptions & SseChannelHooks = {}): SseChannel {
  const coalesceMs = options.coalesceMs ?? EVENTS_COALESCE_MS;
  const maxBuffered = options.maxBufferedBytes ?? EVENTS_MAX_BUFFERED_BYTES;
  const pending = new Map<string, () => SseEvent>();
  let flushTimer: NodeJS.Timeout | undefined;
  let closed = false;
  let id = 0;

  const write = (text: string): void => {
    if (closed) return;
    out.write(text);
    // A client that does not read: drop it rather than hold its events without end.
    if (out.writableLength > maxBuffered) {
      channel.close();
      options.onDrop?.();
      out.destroy();
    }
  };
  const frame = (e: SseEvent): string => {
    id += 1;
    // JSON has no raw newlines, so one data line holds it.
    return `id: ${id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
  };
  // Runs `then` only while the client may still read; ends the stream once it may not.
  const whenAllowed = (then: () => void): void => {
    const authorize = options.authorize;
    if (!authorize) return then();
    authorize().then((ok) => ok, () => false).then((ok) => {
      if (closed) return;
      if (ok) return then();
      const last = frame(ACCESS_REVOKED_EVENT);
      // A client that is not reading gets no goodbye: its connection just closes.
      const stuck = out.writableNeedDrain;
      channel.close();
      if (stuck) out.destroy();
      else out.end(last);
    }, () => undefined); // the steps above do not throw; nothing to report
  };
  const flush = (): void => {
    flushTimer = undefined;
    const batch = [...pending.values()];
    pending.clear();
    let text = '';
    for (const render of batch) {
      try {
        text += frame(render());
      } catch {
        // A change that cannot be described is not worth a dropped stream: skip it.
      }
    }
    if (text) write(text);
  };
  const heartbeat = setInterval(() => whenAllowed(() => write(`: heartbeat ${new Date().toISOString()}\n\n`)), options.heartbeatMs ?? EVENTS_HEARTBEAT_MS);
  heartbeat.unref();

  const channel: SseChannel = {
    push(key, render) {
      if (closed) return;
      pending.set(key, render);
      flushTimer ??= setTimeout(() => whenAllowed(flush), coalesceMs);
      flushTimer.unref();
    },
    send(event) {
      write(frame(event));
    },
    recheck() {
      if (!closed) whenAllowed(() => {});
    },
    get closed() {
      return closed;
    },
    close() {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      if (flushTimer) clearTimeout(flushTimer);
      pending.clear();
      options.onClose?.();
    },
  };
  return channel;
}

/** The key under which changes to the same thing coalesce. */
export function changeKey(change: CacheChange): string {
  return `${change.kind}|${change.job ?? ''}|${change.executor ?? ''}|${change.item ?? ''}`;
}

/** What an event says about a change, read from the cache when it is sent. */
function describeChange(ctx: ConsoleContext, change: CacheChange): SseEvent {
  const ns = change.namespace!;
  const deleted = (() => {
    switch (change.kind) {
      case 'namespace': return !ctx.cache.namespace(ns);
      case 'job': return !ctx.cache.job(ns, change.job!);
      case 'assignment': return !ctx.cache.job(ns, change.job!)?.assignment;
      case 'shard': return !ctx.cache.job(ns, change.job!)?.shards.has(change.item!);
      case 'executor': return !ctx.cache.executor(ns, change.executor!);
      default: return false;
    }
  })();
  const data: Record<string, unknown> = { kind: change.kind, namespace: ns };
  if (change.job !== undefined) data.job = change.job;
  if (change.executor !== undefined) data.executor = change.executor;
  if (change.item !== undefined) data.item = change.item;
  if (change.kind === 'executor') data.online = !!ctx.cache.executor(ns, change.executor!)?.presence;
  data.deleted = deleted;
  return { event: change.kind, data };
}

/** The live stream's routes, with its timings (tests shorten them). */
export function createEventRoutes(options: SseOptions = {}): ConsoleRoutes {
  return async (app, ctx) => {
    app.get('/namespaces/:namespace/events', {
      schema: {
        tags: ['events'],
        summary: "The namespace's changes (jobs, shards, executors, assignments) as server-sent events, coalesced per thing; a heartbeat comment keeps the connection",
        params: NamespaceParams,
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream: events job, shard, assignment, executor, namespace; data {kind, namespace, job?, executor?, item?, online?, deleted}' }) },
      },
      config: { access: { level: 'viewer' } },
    }, async (request, reply) => {
      const { namespace } = request.params as { namespace: string };
      if (!ctx.cache.namespace(namespace)) throw new OrreryError('not-found', `namespace '${namespace}' does not exist`, { details: { namespace } });
      const slot = app.streams.open(request);
      const res = reply.raw;
      reply.hijack();
      res.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no',
        connection: 'keep-alive',
      });
      let off = (): void => {};
      const channel = createSseChannel(res, {
        ...options,
        onClose: () => {
          off();
          slot.release();
        },
        onDrop: () => request.log.warn({ namespace, user: request.principal?.user }, 'event stream client too slow; dropped'),
        authorize: () => slot.allowed(),
      });
      off = ctx.cache.on('change', (change) => {
        // Users, tokens or the session secret changed: the caller may have lost access.
        if (change.kind === 'console') return channel.recheck();
        if (change.namespace !== namespace) return;
        channel.push(changeKey(change), () => describeChange(ctx, change));
      });
      const end = (): void => channel.close();
      // The response closes when the client goes (or the console closes its connections).
      res.on('close', end);
      res.on('error', (error) => {
        request.log.debug({ err: toError(error) }, 'event stream connection failed');
        end();
      });
      res.write(`retry: ${EVENTS_RETRY_MS}\n\n`);
      channel.send({ event: 'ready', data: { namespace } });
    });
  };
}

/** The live stream with the default timings. */
export const eventRoutes: ConsoleRoutes = createEventRoutes();
