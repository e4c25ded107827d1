/**
 * The one webhook alarm sender of Orrery's processes: the allocator's unassigned-shard and
 * executor-lost alarms, the executor's run and failover alarms.
 *
 * What it guarantees:
 * - `send(key, url, body)` never blocks and never throws: it answers at once `queued`, `silenced`
 *   or `dropped`, and the POST happens in the background.
 * - **At most one alarm per key per silence window**: the first `send` of a key opens a window of
 *   `silenceMs` (the namespace's `alarm.silenceSeconds`) during which further sends of that key are
 *   `silenced`. The window is taken by the attempt — an alarm dropped because the queue was full, or
 *   one the webhook refused, still closes its window, so a flood of events is at most one log line
 *   and one POST per key and window.
 * - Each alarm is a JSON POST with a timeout (`alarm.timeoutSeconds`); a network error, a timeout
 *   or a 5xx is retried up to `alarm.retries` times with exponential backoff
 *   ({@link ALARM_BACKOFF_BASE_MS} doubling, at most {@link ALARM_BACKOFF_MAX_MS}); a 4xx is the
 *   receiver refusing this alarm and is not retried. A 2xx is delivered.
 * - The queue is bounded ({@link ALARM_QUEUE_SIZE} waiting alarms, {@link ALARM_CONCURRENCY} in
 *   flight): when it is full the new alarm is dropped, logged and counted.
 * - `close()` is idempotent: it drops what still waits (logged, counted), aborts the POSTs and
 *   backoffs in flight and resolves when they have stopped.
 *
 * What it does not: persist alarms (a process that dies loses its queue), or deduplicate across
 * processes (a standby allocator that takes over may send an alarm its predecessor sent).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { toError } from './errors.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import { ALARM_RETRIES_DEFAULT, ALARM_SILENCE_SECONDS_DEFAULT, ALARM_TIMEOUT_SECONDS_DEFAULT, type NamespaceInfo } from './schemas/namespace.js';
import { isHttpUrl } from './schemas/job-config.js';

/** Alarms waiting to be sent, at most; one more is dropped (logged and counted). */
export const ALARM_QUEUE_SIZE = 100;
/** Alarms POSTed at the same time, at most: a slow webhook holds these, never a caller. */
export const ALARM_CONCURRENCY = 2;
/** The wait before the first retry, in ms; each further retry waits twice as long. */
export const ALARM_BACKOFF_BASE_MS = 1000;
/** The longest wait between two attempts, in ms. */
export const ALARM_BACKOFF_MAX_MS = 30_000;
/** Silence windows are swept of expired keys once the map holds more than this many keys. */
const SILENCE_SWEEP_SIZE = 1024;

/** How one alarm is sent: its silence window, one POST's timeout, retries after the first POST. */
export interface AlarmPolicy {
  silenceMs: number;
  timeoutMs: number;
  retries: number;
}

/** The policy a namespace's `alarm` settings give (their defaults when absent or unreadable). */
export function alarmPolicy(alarm: Partial<NamespaceInfo['alarm']> | undefined): AlarmPolicy {
  return {
    silenceMs: (alarm?.silenceSeconds ?? ALARM_SILENCE_SECONDS_DEFAULT) * 1000,
    timeoutMs: (alarm?.timeoutSeconds ?? ALARM_TIMEOUT_SECONDS_DEFAULT) * 1000,
    retries: alarm?.retries ?? ALARM_RETRIES_DEFAULT,
  };
}

/** The wait before retry `retry` (1 for the first), in ms: base × 2^(retry−1), at most `maxMs`. */
export function alarmBackoffMs(retry: number, baseMs = ALARM_BACKOFF_BASE_MS, maxMs = ALARM_BACKOFF_MAX_MS): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, retry - 1));
}

/** What an HTTP status means for an alarm: delivered (2xx), retry (5xx), or refused for good (anything else). */
export function classifyAlarmStatus(status: number): 'delivered' | 'retry' | 'refused' {
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 500 && status < 600) return 'retry';
  return 'refused';
}

/**
 * Sends one POST of `body` (JSON text) to `url`; resolves the HTTP status, rejects on a network
 * error or when `signal` aborts (the timeout, or `close()`).
 */
export type AlarmPost = (url: string, body: string, signal: AbortSignal) => Promise<{ status: number }>;

/** The default {@link AlarmPost}: `fetch`, no redirects followed, the answer's body discarded. */
export const fetchAlarmPost: AlarmPost = async (url, body, signal) => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal, redirect: 'manual' });
  await response.body?.cancel().catch(() => undefined);
  return { status: response.status };
};

/** What `send` did with an alarm. */
export type AlarmSendResult = 'queued' | 'silenced' | 'dropped';

/** Per-alarm options of {@link AlarmSender.send}. */
export interface AlarmSendOptions extends Partial<AlarmPolicy> {
  /** Called once the webhook answered 2xx. */
  onDelivered?: () => void;
}

/** Options of {@link createAlarmSender}. */
export interface AlarmSenderOptions {
  logger: Logger;
  /** Registers the sender's counters (`orrery_alarms_dropped_total`, …; see docs/metrics.md). */
  metrics?: Metrics;
  /** The POST; default {@link fetchAlarmPost}. */
  post?: AlarmPost;
  /** The clock of silence windows, epoch ms. Default `Date.now`. */
  now?: () => number;
  /** The wait between attempts; rejects when `signal` aborts. Default: a timer. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Defaults of a send that gives no policy. Default `alarmPolicy(undefined)`. */
  policy?: Partial<AlarmPolicy>;
  /** Default {@link ALARM_QUEUE_SIZE}. */
  queueSize?: number;
  /** Default {@link ALARM_CONCURRENCY}. */
  concurrency?: number;
  /** Default {@link ALARM_BACKOFF_BASE_MS}. */
  backoffBaseMs?: number;
  /** Default {@link ALARM_BACKOFF_MAX_MS}. */
  backoffMaxMs?: number;
}

/** A running alarm sender. */
export interface AlarmSender {
  /** Queues a JSON POST of `body` to `url` unless `key` is silenced; never blocks, never throws. */
  send(key: string, url: string, body: unknown, options?: AlarmSendOptions): AlarmSendResult;
  /** Resolves when nothing waits and nothing is in flight. */
  idle(): Promise<void>;
  /** Drops what waits, aborts what is in flight; resolves when every attempt has stopped. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Joins the parts of an alarm key (namespace, kind, job or executor) unambiguously. */
export function alarmKey(...parts: string[]): string {
  return parts.join('\0');
}

interface Queued {
  key: string;
  url: string;
  body: string;
  policy: AlarmPolicy;
  onDelivered: (() => void) | undefined;
}

const positive = (value: number | undefined, fallback: number): number =>
  value !== undefined && Number.isFinite(value) && value >= 0 ? value : fallback;

/** Creates an alarm sender (see the module header). */
export function createAlarmSender(options: AlarmSenderOptions): AlarmSender {
  const { logger } = options;
  const post = options.post ?? fetchAlarmPost;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number, signal: AbortSignal) => delay(ms, undefined, { signal }));
  const base = alarmPolicy(undefined);
  const defaults: AlarmPolicy = {
    silenceMs: positive(options.policy?.silenceMs, base.silenceMs),
    timeoutMs: positive(options.policy?.timeoutMs, base.timeoutMs),
    retries: positive(options.policy?.retries, base.retries),
  };
  const queueSize = Math.max(0, options.queueSize ?? ALARM_QUEUE_SIZE);
  const concurrency = Math.max(1, options.concurrency ?? ALARM_CONCURRENCY);
  const backoffBaseMs = options.backoffBaseMs ?? ALARM_BACKOFF_BASE_MS;
  const backoffMaxMs = options.backoffMaxMs ?? ALARM_BACKOFF_MAX_MS;
  const dropped = options.metrics?.counter('orrery_alarms_dropped_total', 'Alarms not sent: the queue was full, the sender closed, or the alarm was invalid, by reason', ['reason']);
  const failed = options.metrics?.counter('orrery_alarms_failed_total', 'Alarms the webhook never accepted: refused (4xx, …) or every retry failed, by reason', ['reason']);
  const retried = options.metrics?.counter('orrery_alarm_retries_total', 'Alarm POSTs retried after a network error, a timeout or a 5xx');
  const queued = options.metrics?.gauge('orrery_alarm_queue_length', 'Alarms waiting to be sent');

  const silencedUntil = new Map<string, number>();
  const queue: Queued[] = [];
  const abort = new AbortController();
  const idleWaiters: Array<() => void> = [];
  let active = 0;
  let closed = false;
  let closing: Promise<void> | undefined;

  function settleIdle(): void {
    if (queue.length > 0 || active > 0) return;
    for (const resolve of idleWaiters.splice(0)) resolve();
  }

  function drop(reason: 'queue-full' | 'closed' | 'invalid', fields: Record<string, unknown>, message: string): 'dropped' {
    dropped?.inc({ reason });
    logger.error({ ...fields, reason }, message);
    return 'dropped';
  }

  /** One alarm, with its retries; never rejects. */
  async function deliver(item: Queued): Promise<void> {
    const fields = { alarmKey: item.key.replaceAll('\0', '/'), url: item.url };
    for (let attempt = 1; ; attempt += 1) {
      if (closed) return;
      let status: number | undefined;
      let error: Error | undefined;
      const signal = AbortSignal.any([abort.signal, AbortSignal.timeout(item.policy.timeoutMs)]);
      try {
        status = (await post(item.url, item.body, signal)).status;
      } catch (e) {
        error = toError(e);
      }
      if (closed) return;
      const verdict = status === undefined ? 'retry' : classifyAlarmStatus(status);
      if (verdict === 'delivered') {
        logger.info({ ...fields, attempt, status }, 'alarm delivered');
        try {
          item.onDelivered?.();
        } catch (e) {
          logger.error({ ...fields, err: toError(e) }, 'alarm delivered, but its onDelivered callback failed');
        }
        return;
      }
      if (verdict === 'refused') {
        failed?.inc({ reason: 'refused' });
        logger.error({ ...fields, attempt, status }, 'alarm refused by the webhook; not retried');
        return;
      }
      if (attempt > item.policy.retries) {
        failed?.inc({ reason: 'gave-up' });
        logger.error({ ...fields, attempts: attempt, status, err: error }, 'alarm not delivered: every retry failed');
        return;
      }
      const waitMs = alarmBackoffMs(attempt, backoffBaseMs, backoffMaxMs);
      retried?.inc();
      logger.warn({ ...fields, attempt, status, err: error, retryInMs: waitMs }, 'alarm POST failed; retrying');
      try {
        await sleep(waitMs, abort.signal);
      } catch {
        return; // closed meanwhile
      }
    }
  }

  function pump(): void {
    while (!closed && active < concurrency && queue.length > 0) {
      const item = queue.shift()!;
      active += 1;
      void deliver(item).finally(() => {
        active -= 1;
        queued?.set(queue.length);
        pump();
        settleIdle();
      });
    }
    queued?.set(queue.length);
  }

  const sender: AlarmSender = {
    send(key, url, body, sendOptions = {}) {
      const fields = { alarmKey: String(key).replaceAll('\0', '/'), url };
      if (closed) return drop('closed', fields, 'alarm dropped: the sender is closed');
      if (typeof key !== 'string' || key === '') return drop('invalid', fields, 'alarm dropped: its key must be a non-empty string');
      if (typeof url !== 'string' || !isHttpUrl(url)) return drop('invalid', fields, 'alarm dropped: its webhook must be an http:// or https:// URL');
      let text: string;
      try {
        text = JSON.stringify(body) ?? 'null';
      } catch (e) {
        return drop('invalid', { ...fields, err: toError(e) }, 'alarm dropped: its body is not JSON-serialisable');
      }
      const policy: AlarmPolicy = {
        silenceMs: positive(sendOptions.silenceMs, defaults.silenceMs),
        timeoutMs: Math.max(1, positive(sendOptions.timeoutMs, defaults.timeoutMs)),
        retries: Math.floor(positive(sendOptions.retries, defaults.retries)),
      };
      const t = now();
      const until = silencedUntil.get(key);
      if (until !== undefined && t < until) return 'silenced';
      if (silencedUntil.size >= SILENCE_SWEEP_SIZE) for (const [k, u] of silencedUntil) if (u <= t) silencedUntil.delete(k);
      if (policy.silenceMs > 0) silencedUntil.set(key, t + policy.silenceMs);
      if (queue.length >= queueSize) return drop('queue-full', { ...fields, queueSize }, 'alarm dropped: the alarm queue is full');
      queue.push({ key, url, body: text, policy, onDelivered: sendOptions.onDelivered });
      pump();
      return 'queued';
    },
    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settleIdle();
      });
    },
    close() {
      closing ??= (async () => {
        closed = true;
        const waiting = queue.splice(0);
        if (waiting.length > 0) {
          dropped?.inc({ reason: 'closed' }, waiting.length);
          logger.warn({ alarms: waiting.length }, 'alarms dropped: the sender closed before sending them');
        }
        queued?.set(0);
        abort.abort();
        await sender.idle();
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return sender.close();
    },
  };
  return sender;
}
