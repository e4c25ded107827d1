/**
 * The executor's HTTP endpoint: `/healthz` and `/metrics` (open, from core's endpoint), and its run
 * history and logs, authenticated with the cluster token
 * (`Authorization: Bearer $ORRERY_CLUSTER_TOKEN`, the scheme in any case):
 * - `GET /runs?job=J[&limit=N][&before=MS]` — the job's runs here, newest first (`limit` 1..1000,
 *   default 100), only those started before `before` (epoch ms) when given;
 * - `GET /runs/summary?since=MS` — per job, the kept runs that **ended** at or after `since` (epoch
 *   ms): `{since, jobs: [{job, runs, failures, timedOut, lastFailureAt}]}` (`failures` counts failed
 *   and timed-out runs, `timedOut` the latter; jobs without such runs are left out), from the
 *   history's in-memory index — no file is read per request;
 * - `GET /runs/:runId` — one run's record;
 * - `GET /runs/:runId/log?stream=stdout|stderr[&offset=N]` — its log (a run in progress too, as it
 *   grows) from byte N (default 0), or one
 *   `Range: bytes=a-b | a- | -n` (206; 416 with `Content-Range: bytes *\/size` when it starts past
 *   the end) for tailing. `X-Log-Size` always gives the log's size.
 * `HEAD` works wherever `GET` does.
 *
 * Guarantees: the history is **off** (every `/runs` route a 404 saying why) unless the executor has
 * a cluster token; the token is checked before anything else, in constant time; `job`, `runId`,
 * `limit`, `since`, `stream`, `offset` and `Range` are validated before anything touches the disk (a 400
 * naming the field and the rule); a log is opened once and streamed from that descriptor, so a log
 * pruned meanwhile is a 404 (or the rest of an answer already started is cut), never a crash.
 * Whatever the history throws is a 500 through core's one error handler.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { Type } from '@sinclair/typebox';
import {
  JOB_NAME_PATTERN,
  OrreryError,
  startHttpEndpoint,
  toError,
  validationError,
  type HttpApp,
  type HttpEndpoint,
  type Logger,
  type Metrics,
} from '@orrery/core';
import type { History } from './history.js';

/** Options of {@link startExecutorHttp}. */
export interface ExecutorHttpOptions {
  port: number;
  /** Bind address. Default `127.0.0.1`. */
  host?: string;
  metrics: Metrics;
  history: History;
  /** The cluster token. Undefined or empty: the run history is off (its routes answer 404, saying why). */
  clusterToken: string | undefined;
  health: () => { ok: boolean } & Record<string, unknown>;
  /** Where 5xx answers' errors go. Default: silent. */
  logger?: Logger;
}

export type ExecutorHttp = HttpEndpoint;

/** Runs listed at most per request, and by default. */
export const MAX_RUNS_LISTED = 1000;
export const DEFAULT_RUNS_LISTED = 100;
/** A run id as the executor makes them: `<start ms, base 36>-<item>-<hex>` (lower-case, digits, `-`). */
export const RUN_ID_PATTERN = /^[0-9a-z]+-[0-9a-z-]+$/;
/** Longest run id accepted, in characters. */
const RUN_ID_MAX_LENGTH = 64;

const ListQuery = Type.Object({
  job: Type.String({ pattern: JOB_NAME_PATTERN.source }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_RUNS_LISTED })),
  before: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
}, { additionalProperties: false });
const SummaryQuery = Type.Object({
  since: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
}, { additionalProperties: false });
const RunParams = Type.Object({ runId: Type.String({ pattern: RUN_ID_PATTERN.source, maxLength: RUN_ID_MAX_LENGTH }) });
const LogQuery = Type.Object({
  stream: Type.Optional(Type.Unsafe<'stdout' | 'stderr'>({ type: 'string', enum: ['stdout', 'stderr'] })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
}, { additionalProperties: false });
const NoQuery = Type.Object({}, { additionalProperties: false });

/** What an `Authorization` header proves: `ok`, or why not. */
export type BearerCheck = 'ok' | 'off' | 'missing' | 'scheme' | 'wrong';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * Checks `Authorization: Bearer <token>` (the scheme is case-insensitive, RFC 9110 §11.1) against
 * the cluster token. Compares digests with `timingSafeEqual`: the time taken says nothing about the
 * token, not even its length. `off`: this executor has no token.
 */
export function checkBearer(header: string | undefined, token: string | undefined): BearerCheck {
  if (!token) return 'off';
  if (header === undefined || header.trim() === '') return 'missing';
  const m = /^[ \t]*bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (!m) return 'scheme';
  return timingSafeEqual(digest(m[1]!), digest(token)) ? 'ok' : 'wrong';
}

/** A `Range` header, parsed (pure). Only `bytes` ranges are understood, one at a time. */
export type RangeRequest =
  | { kind: 'none' }
  | { kind: 'invalid'; rule: string; message: string }
  | { kind: 'from'; first: number; last: number | undefined }
  | { kind: 'suffix'; length: number };

/**
 * Parses a `Range` header (RFC 9110 §14.2). `none`: no header, or a unit other than `bytes` (which
 * a server MUST ignore). `invalid` (answered 400): not `bytes=…` syntax, last before first, or more
 * than one range (this server sends no multipart answers; §14.2 lets it reject such requests).
 */
export function parseRange(header: string | undefined): RangeRequest {
  if (header === undefined) return { kind: 'none' };
  const eq = header.indexOf('=');
  const unit = (eq < 0 ? header : header.slice(0, eq)).trim();
  if (eq >= 0 && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(unit) && unit.toLowerCase() !== 'bytes') return { kind: 'none' };
  const invalid = (rule: string, message: string): RangeRequest => ({ kind: 'invalid', rule, message });
  if (eq < 0 || unit.toLowerCase() !== 'bytes') return invalid('syntax', "header 'range' must be bytes=first-last, bytes=first- or bytes=-length (syntax)");
  const specs = header.slice(eq + 1).split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (specs.length === 0) return invalid('syntax', "header 'range' names no range (syntax)");
  if (specs.length > 1) return invalid('one-range', "header 'range' must ask for one range only (one-range)");
  const spec = specs[0]!;
  const suffix = /^-([0-9]+)$/.exec(spec);
  if (suffix) return { kind: 'suffix', length: Number(suffix[1]) };
  const from = /^([0-9]+)-([0-9]*)$/.exec(spec);
  if (!from) return invalid('syntax', "header 'range' must be bytes=first-last, bytes=first- or bytes=-length (syntax)");
  const first = Number(from[1]);
  const last = from[2] === '' ? undefined : Number(from[2]);
  if (last !== undefined && last < first) return invalid('last-before-first', "header 'range' ends before it starts (last-before-first)");
  return { kind: 'from', first, last };
}

/** What part of a log of `size` bytes to send (pure). `end` is inclusive; `start > end` sends nothing. */
export type LogSlice =
  | { status: 200 | 206; start: number; end: number }
  | { status: 416 };

/** The slice a request asks for: a range (206 or 416, RFC 9110 §14.1.2), else from `offset` (200). */
export function sliceLog(size: number, range: RangeRequest, offset: number): LogSlice {
  if (range.kind === 'from') {
    if (range.first >= size) return { status: 416 };
    return { status: 206, start: range.first, end: Math.min(range.last ?? size - 1, size - 1) };
  }
  if (range.kind === 'suffix') {
    if (range.length === 0) return { status: 416 };
    // A suffix of an empty log is satisfiable (§14.1.2) but has no bytes to name: the whole (empty) log.
    if (size === 0) return { status: 200, start: 0, end: -1 };
    return { status: 206, start: Math.max(0, size - range.length), end: size - 1 };
  }
  return { status: 200, start: Math.min(offset, size), end: size - 1 };
}

/** True for the error `open` gives when the file (or its folder) is not there. */
function isMissingFile(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Closes a log descriptor; a failure is only logged (the answer does not depend on it). */
async function closeQuietly(file: FileHandle | undefined, log: { warn(obj: object, msg: string): void }): Promise<void> {
  try {
    await file?.close();
  } catch (error) {
    log.warn({ err: toError(error) }, 'run log close failed');
  }
}

const notFound = (runId: string): OrreryError =>
  new OrreryError('not-found', `no run '${runId}' on this executor`, { details: { runId } });

/** The `/runs` routes, as a plugin of core's endpoint. */
export function runsRoutes(options: Pick<ExecutorHttpOptions, 'history' | 'clusterToken'>): (app: HttpApp) => Promise<void> {
  const { history, clusterToken } = options;
  return async (app) => {
    app.addHook('onRequest', async (request) => {
      const check = checkBearer(request.headers.authorization, clusterToken);
      if (check === 'ok') return;
      if (check === 'off') {
        throw new OrreryError('not-found', 'run history is off on this executor: it was started without ORRERY_CLUSTER_TOKEN (set it to serve /runs)', { details: { reason: 'history-off' } });
      }
      throw new OrreryError('no-auth', 'a valid cluster token is required: Authorization: Bearer <ORRERY_CLUSTER_TOKEN>', { details: { reason: check } });
    });

    app.get('/runs', { schema: { querystring: ListQuery } }, async (request) =>
      history.list(request.query.job, request.query.limit ?? DEFAULT_RUNS_LISTED, request.query.before));

    // A static path: it wins over /runs/:runId ('summary' is not a run id either: no '-').
    app.get('/runs/summary', { schema: { querystring: SummaryQuery } }, async (request) => history.summary(request.query.since));

    app.get('/runs/:runId', { schema: { params: RunParams, querystring: NoQuery } }, async (request) => {
      const found = history.get(request.params.runId);
      if (!found) throw notFound(request.params.runId);
      return found.record;
    });

    app.route({
      method: ['GET', 'HEAD'],
      url: '/runs/:runId/log',
      exposeHeadRoute: false,
      schema: { params: RunParams, querystring: LogQuery },
      handler: async (request, reply) => {
        const { runId } = request.params;
        const stream = request.query.stream ?? 'stdout';
        const range = parseRange(request.headers.range);
        if (range.kind === 'invalid') throw validationError([{ field: 'range', rule: range.rule, message: range.message }], 'request');
        if (range.kind !== 'none' && request.query.offset !== undefined) {
          throw validationError([{ field: 'offset', rule: 'not-with-range', message: "querystring 'offset' cannot be used with a Range header (not-with-range)" }], 'request');
        }
        // A run in progress has logs but no record yet: its log is served as it grows.
        const path = history.logPath(runId, stream);
        if (!path) throw notFound(runId);
        let file: FileHandle | undefined;
        try {
          file = await open(path, 'r');
        } catch (error) {
          if (!isMissingFile(error)) throw toError(error);
          // No file: a run that printed nothing on this stream (logs are made on the first
          // write) — or a run pruned since we looked, which is a 404.
          if (!history.logPath(runId, stream)) throw notFound(runId);
        }
        try {
          const size = file ? (await file.stat()).size : 0;
          const slice = sliceLog(size, range, request.query.offset ?? 0);
          void reply.header('x-log-size', String(size)).header('accept-ranges', 'bytes').header('x-content-type-options', 'nosniff');
          if (slice.status === 416) {
            await closeQuietly(file, request.log);
            return reply.code(416).header('content-range', `bytes */${size}`).send();
          }
          const length = Math.max(0, slice.end - slice.start + 1);
          void reply.code(slice.status).type('text/plain; charset=utf-8').header('content-length', String(length));
          if (slice.status === 206) void reply.header('content-range', `bytes ${slice.start}-${slice.end}/${size}`);
          if (!file || length === 0 || request.method === 'HEAD') {
            await closeQuietly(file, request.log);
            return reply.send();
          }
          // The descriptor opened above: a log removed from now on is still read whole.
          const body = file.createReadStream({ start: slice.start, end: slice.end, autoClose: true });
          body.on('error', (error) => request.log.warn({ err: toError(error), runId }, 'run log read failed'));
          return reply.send(body);
        } catch (error) {
          await closeQuietly(file, request.log);
          throw error;
        }
      },
    });
  };
}

/** Starts the executor's endpoint: core's `/healthz` and `/metrics` plus the `/runs` routes. */
export async function startExecutorHttp(options: ExecutorHttpOptions): Promise<ExecutorHttp> {
  return startHttpEndpoint({
    port: options.port,
    ...(options.host === undefined ? {} : { host: options.host }),
    metrics: options.metrics,
    health: options.health,
    ...(options.logger ? { logger: options.logger } : {}),
    routes: runsRoutes(options),
  });
}
