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
 * - Cleaned up on disconnect (and when the console closes): the cache listener and timers go.
 * Not guaranteed: delivery of every change (a reconnecting client re-reads what it shows), and
 * order between different things within one window.
 */
import type { Writable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { OrreryError, toError } from '@orrery/core';
import type { ConsoleRoutes } from '../app.js';
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
  readonly closed: boolean;
  /** Stops timers and writes; idempotent. */
  close(): void;
}

/**
 * Creates the per-client channel over `out` (the response): coalescing, heartbeat and the buffer
 * bound of the module header. `onDrop` is called once when it closes the client for being slow.
 */
export function createSseChannel(out: Writable, options: SseOptions & { onDrop?: () => void; onClose?: () => void } = {}): SseChannel {
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
  const heartbeat = setInterval(() => write(`: heartbeat ${new Date().toISOString()}\n\n`), options.heartbeatMs ?? EVENTS_HEARTBEAT_MS);
  heartbeat.unref();

  const channel: SseChannel = {
    push(key, render) {
      if (closed) return;
      pending.set(key, render);
      flushTimer ??= setTimeout(flush, coalesceMs);
      flushTimer.unref();
    },
    send(event) {
      write(frame(event));
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
        onClose: () => off(),
        onDrop: () => request.log.warn({ namespace, user: request.principal?.user }, 'event stream client too slow; dropped'),
      });
      off = ctx.cache.on('change', (change) => {
        if (change.namespace !== namespace || change.kind === 'console') return;
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
