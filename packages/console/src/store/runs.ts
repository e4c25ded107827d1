/**
 * A job's runs and their logs, read from the executors that ran them over their history API
 * (`GET /runs`, `/runs/:runId`, `/runs/:runId/log`, with the cluster token) — one store for the
 * console API and the CLI — and each executor's tally of recent runs per job (`GET /runs/summary`,
 * {@link fetchRunSummaries}), for the namespace's stats. Where the executors are and which runs are
 * in progress comes from a {@link RunDirectory}: ZooKeeper for the CLI ({@link runDirectoryFromZk}),
 * the console's cache for the API.
 *
 * What it guarantees:
 * - `listRuns` (and `fetchRunSummaries`) asks every online executor of the namespace at once, each
 *   with a timeout; one that does not answer, refuses, or answers nonsense is **named** in
 *   `unavailable` with the reason, never an error. Offline executors (no presence: their history
 *   cannot be reached) are named too, as `offline`. Runs in progress (from the shard nodes) are
 *   listed with status `running`.
 * - The merge ({@link mergeRuns}, pure) is newest first, honours `before` (runs started strictly
 *   before, epoch ms) and `limit`, and never skips a run between pages: `nextBefore` is the cursor
 *   of the next page (null: no more).
 * - Everything sent to an executor is built here from validated values (a run id, a stream, an
 *   integer offset, a re-serialised single byte range): no caller's header or path goes through.
 *   Nothing follows a redirect (the token stays with the executor it was meant for).
 * - Everything an executor answers is bounded (JSON bodies to {@link DEFAULT_MAX_ANSWER_BYTES}, a
 *   log to the smaller of the length it announced and the range asked for — reading stops there)
 *   and validated (records that are not run records are dropped); logs are streamed, never held
 *   whole. A follower takes only a 206 for the range it asked (or an empty answer), so an
 *   executor that ignores `Range` costs it at most {@link FOLLOW_CHUNK_BYTES} per poll.
 * - A log body is read only while the caller wants it: the caller's abort signal stays connected
 *   until the body ends, and a body that stalls for {@link DEFAULT_BODY_IDLE_TIMEOUT_MS} while
 *   being read fails (a follower then counts its executor as not answering).
 * - Without a cluster token every call fails with `unavailable`, naming `ORRERY_CLUSTER_TOKEN`.
 *   The token never appears in an error, an event or a log line.
 *
 * Not guaranteed: an executor's answer is as true as the executor (whoever can write its presence
 * node in ZooKeeper chooses where the token is sent — protect ZooKeeper with digest auth).
 */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { StringDecoder } from 'node:string_decoder';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  JOB_NAME_PATTERN,
  NODE_NAME_PATTERN,
  OrreryError,
  RUN_STATUSES,
  checkExecutorInfo,
  checkShardState,
  hasErrorCode,
  inspectNode,
  paths,
  toError,
  type ShardState,
  type ZkClient,
} from '@orrery/core';

/** How long one executor gets to answer a request (headers and a JSON body), in ms. */
export const DEFAULT_EXECUTOR_TIMEOUT_MS = 5000;
/**
 * How long a log body may stall — no bytes while its reader waits for them — before the read
 * fails, in ms. A reader that is slow itself does not count (the body is read only when it asks).
 */
export const DEFAULT_BODY_IDLE_TIMEOUT_MS = 15_000;
/** The most bytes read from an executor's JSON answer (1000 records of ~1 KiB, with room). */
export const DEFAULT_MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** Bound on one executor's run summary answer, in bytes (about 5,000 jobs' counts). */
export const SUMMARY_MAX_ANSWER_BYTES = 512 * 1024;
/** How far in the future a summary's last failure may be (the executors' clocks), in ms. */
export const SUMMARY_CLOCK_SKEW_MS = 5 * 60_000;
/** Runs listed by default, and at most (the executors' own cap per request). */
export const DEFAULT_RUNS_LIMIT = 50;
export const MAX_RUNS_LIMIT = 1000;
/** How often a followed log is polled, in ms. */
export const DEFAULT_FOLLOW_POLL_MS = 500;
/** Bytes asked for per poll of a followed log. */
export const FOLLOW_CHUNK_BYTES = 64 * 1024;
/**
 * How long a follower waits for a finished run's record (the executor saves it just after the
 * outcome reaches ZooKeeper) before it calls the run expired, in ms.
 */
export const DEFAULT_RECORD_GRACE_MS = 10_000;
/** How long an executor may fail to answer a follower before it is called offline, in ms. */
export const DEFAULT_OFFLINE_AFTER_MS = 15_000;
/** A run id as executors make them: `<start ms, base 36>-<item>-<hex>`. */
export const RUN_ID_PATTERN = /^[0-9a-z]+-[0-9a-z-]+$/;
export const RUN_ID_MAX_LENGTH = 64;

/** The two log streams of a run. */
export type LogStream = 'stdout' | 'stderr';

/** One run, as listed: a finished run's record, or a run in progress (status `running`). */
export const RunViewSchema = Type.Object({
  runId: Type.String(),
  job: Type.String(),
  item: Type.Integer({ minimum: 0 }),
  executor: Type.String({ description: 'the executor that ran it (and serves its log)' }),
  status: Type.Union([...RUN_STATUSES, 'running'].map((s) => Type.Literal(s))),
  startedAt: Type.Integer({ description: 'epoch ms' }),
  endedAt: Type.Union([Type.Integer(), Type.Null()], { description: 'epoch ms; null while running' }),
  durationMs: Type.Union([Type.Integer(), Type.Null()]),
  exitCode: Type.Union([Type.Integer(), Type.Null()]),
  fireTime: Type.Integer({ description: 'the scheduled fire time (epoch ms) the run belongs to' }),
  attempt: Type.Integer({ minimum: 1 }),
  trigger: Type.Union([Type.String(), Type.Null()], { description: 'cron, run-now, retry, downstream, misfire or failover; null while running' }),
  message: Type.String(),
  recorded: Type.Union([Type.Boolean(), Type.Null()], { description: 'false: the run lost its claim (nothing recorded in ZooKeeper); null while running' }),
  truncated: Type.Optional(Type.Object({ stdout: Type.Optional(Type.Integer()), stderr: Type.Optional(Type.Integer()) }, { description: 'bytes discarded past the log cap, per stream' })),
});
/** One run, as listed. */
export type RunView = Static<typeof RunViewSchema>;

/** Why an executor's runs could not be read. */
export const UNAVAILABLE_REASONS = ['offline', 'no-http-api', 'timeout', 'unreachable', 'refused', 'history-off', 'bad-answer'] as const;
export type UnavailableReason = (typeof UNAVAILABLE_REASONS)[number];
/** An executor whose runs are missing from an answer, and why. */
export interface UnavailableExecutor {
  executor: string;
  reason: UnavailableReason;
  /** A sentence for people. */
  message: string;
}

/** An executor of the namespace, as the store needs it. */
export interface RunExecutor {
  name: string;
  /** Its presence exists. */
  online: boolean;
  /** Where it serves its history API (from its presence). */
  httpUrl?: string;
}

/** A run in progress, from a shard node. */
export interface RunInProgress {
  runId: string;
  job: string;
  item: number;
  executor: string;
  startedAt: number;
  fireTime: number;
  attempt: number;
}

/** Where the executors are and what runs now (ZooKeeper for the CLI, the cache for the API). */
export interface RunDirectory {
  executors(): Promise<RunExecutor[]>;
  /** The job's runs in progress (claims of its shard nodes). */
  inProgress(job: string): Promise<RunInProgress[]>;
  /**
   * The same, read from ZooKeeper at the time of the call: asked only for a run found nowhere else,
   * when `inProgress` answers from a mirror that may not show a run that just started.
   */
  inProgressNow?(job: string): Promise<RunInProgress[]>;
}

/** How to talk to the executors. */
export interface RunsClientOptions {
  /** The cluster token (`ORRERY_CLUSTER_TOKEN`); undefined: every call fails with `unavailable`. */
  clusterToken: string | undefined;
  /** Per executor request, in ms. Default {@link DEFAULT_EXECUTOR_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Default {@link DEFAULT_MAX_ANSWER_BYTES}. */
  maxAnswerBytes?: number;
  /** How long a log body may stall while read, in ms. Default {@link DEFAULT_BODY_IDLE_TIMEOUT_MS}. */
  bodyIdleTimeoutMs?: number;
  /** Default: the global fetch (tests may pass their own). */
  fetch?: typeof fetch;
}

// ---------------------------------------------------------------------------------------------
// The pure core: validating records, merging answers.

/** What an executor's run record must hold (more fields are ignored). */
const RecordSchema = Type.Object({
  runId: Type.String({ pattern: RUN_ID_PATTERN.source, maxLength: RUN_ID_MAX_LENGTH }),
  job: Type.String({ maxLength: 64 }),
  item: Type.Integer({ minimum: 0, maximum: 99_999 }),
  executor: Type.String({ maxLength: 128 }),
  status: Type.Union(RUN_STATUSES.map((s) => Type.Literal(s))),
  startedAt: Type.Integer({ minimum: 0 }),
  endedAt: Type.Integer({ minimum: 0 }),
  durationMs: Type.Integer({ minimum: 0 }),
  exitCode: Type.Union([Type.Integer(), Type.Null()]),
  fireTime: Type.Integer({ minimum: 0 }),
  attempt: Type.Optional(Type.Integer({ minimum: 1 })),
  trigger: Type.Optional(Type.String({ maxLength: 32 })),
  message: Type.Optional(Type.String({ maxLength: 4096 })),
  recorded: Type.Optional(Type.Boolean()),
  truncated: Type.Optional(Type.Object({ stdout: Type.Optional(Type.Integer({ minimum: 0 })), stderr: Type.Optional(Type.Integer({ minimum: 0 })) })),
});

/**
 * An executor's run record made a {@link RunView} (pure): undefined when it is not a run record of
 * `job` (the executor's answer is not trusted).
 */
export function toRunView(input: unknown, job: string): RunView | undefined {
  if (!Value.Check(RecordSchema, input)) return undefined;
  const r = input as Static<typeof RecordSchema>;
  if (r.job !== job) return undefined;
  return {
    runId: r.runId,
    job: r.job,
    item: r.item,
    executor: r.executor,
    status: r.status,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    durationMs: r.durationMs,
    exitCode: r.exitCode,
    fireTime: r.fireTime,
    attempt: r.attempt ?? 1,
    trigger: r.trigger ?? null,
    message: r.message ?? '',
    recorded: r.recorded ?? null,
    ...(r.truncated && (r.truncated.stdout !== undefined || r.truncated.stderr !== undefined) ? { truncated: { ...(r.truncated.stdout !== undefined ? { stdout: r.truncated.stdout } : {}), ...(r.truncated.stderr !== undefined ? { stderr: r.truncated.stderr } : {}) } } : {}),
  };
}

/** A run in progress as a {@link RunView} (pure). */
export function runningView(run: RunInProgress): RunView {
  return {
    runId: run.runId, job: run.job, item: run.item, executor: run.executor, status: 'running', startedAt: run.startedAt,
    endedAt: null, durationMs: null, exitCode: null, fireTime: run.fireTime, attempt: run.attempt, trigger: null, message: '', recorded: null,
  };
}

/** One source's runs for {@link mergeRuns}: `full` when it returned as many as asked (it may hold older ones). */
export interface RunsAnswer {
  runs: readonly RunView[];
  full: boolean;
}

/** A page of merged runs. */
export interface RunsPage {
  /** Newest first. */
  runs: RunView[];
  /** Pass as `before` for the next page; null when there is none. */
  nextBefore: number | null;
}

/** Newest first; ties by run id, descending (stable across pages). */
export function compareRuns(a: RunView, b: RunView): number {
  return b.startedAt - a.startedAt || (a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0);
}

/**
 * Merges the runs of several executors into one page (pure): runs started strictly before
 * `before` (when given), newest first, a run listed once (a finished record wins over its
 * in-progress entry), at most `limit` — plus any that started in the same millisecond as the last
 * one, so that a cursor of times skips none.
 *
 * A source that returned a full answer may hold older runs it did not send: the page stops above
 * the newest of the oldest runs such sources sent (below it, runs could be missing), and
 * `nextBefore` continues from there.
 */
export function mergeRuns(answers: readonly RunsAnswer[], options: { limit: number; before?: number | undefined }): RunsPage {
  let horizon = -Infinity;
  for (const a of answers) {
    if (!a.full || a.runs.length === 0) continue;
    const oldest = Math.min(...a.runs.map((r) => r.startedAt));
    horizon = Math.max(horizon, oldest);
  }
  const byId = new Map<string, RunView>();
  for (const a of answers) {
    for (const run of a.runs) {
      if (options.before !== undefined && run.startedAt >= options.before) continue;
      if (run.startedAt <= horizon) continue;
      const seen = byId.get(run.runId);
      if (!seen || (seen.status === 'running' && run.status !== 'running')) byId.set(run.runId, run);
    }
  }
  const sorted = [...byId.values()].sort(compareRuns);
  const limit = Math.max(1, options.limit);
  if (sorted.length > limit) {
    let end = limit;
    const lastAt = sorted[limit - 1]!.startedAt;
    while (end < sorted.length && sorted[end]!.startedAt === lastAt) end += 1;
    const more = end < sorted.length || horizon > -Infinity;
    return { runs: sorted.slice(0, end), nextBefore: more ? lastAt : null };
  }
  return { runs: sorted, nextBefore: horizon > -Infinity ? horizon + 1 : null };
}

/** A `Range` header, parsed (pure): only `bytes` ranges, one at a time. */
export type ByteRange = { kind: 'from'; first: number; last?: number } | { kind: 'suffix'; length: number };

/**
 * Parses a caller's `Range` header (pure): undefined without one (or with a unit other than
 * `bytes`, which RFC 9110 says to ignore); throws `validation` (400) for anything else that is not
 * exactly one byte range. What is forwarded is re-serialised from the result.
 */
export function parseByteRange(header: string | undefined): ByteRange | undefined {
  if (header === undefined) return undefined;
  const issue = (rule: string, message: string) => new OrreryError('validation', message, { details: { issues: [{ field: 'range', rule, message }] } });
  const eq = header.indexOf('=');
  const unit = (eq < 0 ? header : header.slice(0, eq)).trim().toLowerCase();
  if (eq >= 0 && /^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(unit) && unit !== 'bytes') return undefined;
  if (header.length > 200 || unit !== 'bytes') throw issue('syntax', "header 'range' must be bytes=first-last, bytes=first- or bytes=-length (syntax)");
  const specs = header.slice(eq + 1).split(',').map((s) => s.trim()).filter(Boolean);
  if (specs.length !== 1) throw issue(specs.length === 0 ? 'syntax' : 'one-range', "header 'range' must ask for exactly one range (one-range)");
  const spec = specs[0]!;
  const suffix = /^-(\d{1,15})$/.exec(spec);
  if (suffix) return { kind: 'suffix', length: Number(suffix[1]) };
  const from = /^(\d{1,15})-(\d{0,15})$/.exec(spec);
  if (!from) throw issue('syntax', "header 'range' must be bytes=first-last, bytes=first- or bytes=-length (syntax)");
  const first = Number(from[1]);
  if (from[2] === '') return { kind: 'from', first };
  const last = Number(from[2]);
  if (last < first) throw issue('last-before-first', "header 'range' ends before it starts (last-before-first)");
  return { kind: 'from', first, last };
}

/** A {@link ByteRange} as a `Range` header value (pure). */
export function formatByteRange(range: ByteRange): string {
  return range.kind === 'suffix' ? `bytes=-${range.length}` : `bytes=${range.first}-${range.last ?? ''}`;
}

/** The largest count an executor's summary may give for one job (more runs than a day holds: a lie). */
export const MAX_SUMMARY_COUNT = 1_000_000_000;

const SummaryCount = Type.Integer({ minimum: 0, maximum: MAX_SUMMARY_COUNT });
/** One job's runs on one executor, as its `GET /runs/summary` answers them. */
export const JobRunCountsSchema = Type.Object({
  job: Type.String({ pattern: JOB_NAME_PATTERN.source }),
  runs: SummaryCount,
  failures: SummaryCount,
  timedOut: SummaryCount,
  lastFailureAt: Type.Union([Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()]),
});
/** One job's runs on one executor that ended in the window: `failures` counts failed and timed-out runs. */
export type JobRunCounts = Static<typeof JobRunCountsSchema>;
/** What an executor's `GET /runs/summary` must hold (more fields are ignored). */
const RunSummaryAnswerSchema = Type.Object({
  since: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  jobs: Type.Array(JobRunCountsSchema, { maxItems: 100_000 }),
});

/**
 * An executor's `GET /runs/summary?since=` answer, checked (pure): its jobs, or why it is not a
 * summary of runs since `since` — not the schema, another `since`, a job twice, more failures than
 * runs or time-outs than failures, a last failure without failures (or none with them).
 */
export function checkRunSummary(input: unknown, since: number, now = Date.now()): { ok: true; jobs: JobRunCounts[] } | { ok: false; problem: string } {
  if (!Value.Check(RunSummaryAnswerSchema, input)) return { ok: false, problem: 'something that is not a run summary' };
  const answer = input as Static<typeof RunSummaryAnswerSchema>;
  if (answer.since !== since) return { ok: false, problem: `a summary since ${answer.since}, not since ${since}` };
  const seen = new Set<string>();
  const jobs: JobRunCounts[] = [];
  for (const j of answer.jobs) {
    if (seen.has(j.job)) return { ok: false, problem: `job '${j.job}' twice` };
    seen.add(j.job);
    if (j.failures > j.runs || j.timedOut > j.failures) return { ok: false, problem: `impossible counts for job '${j.job}'` };
    if ((j.lastFailureAt === null) !== (j.failures === 0)) return { ok: false, problem: `a last failure that does not match the failures of job '${j.job}'` };
    // A failure before the window, or more than a clock's skew in the future, is not one of these runs.
    if (j.lastFailureAt !== null && (j.lastFailureAt < since || j.lastFailureAt > now + SUMMARY_CLOCK_SKEW_MS)) return { ok: false, problem: `a last failure of job '${j.job}' outside the window` };
    jobs.push({ job: j.job, runs: j.runs, failures: j.failures, timedOut: j.timedOut, lastFailureAt: j.lastFailureAt });
  }
  return { ok: true, jobs };
}

/** One executor's summary, as {@link fetchRunSummaries} gives it. */
export interface ExecutorRunSummary {
  executor: string;
  jobs: JobRunCounts[];
}

/**
 * Sums several executors' summaries per job (pure): runs, failures and time-outs added, the latest
 * failure kept. Jobs in name order.
 */
export function sumRunSummaries(summaries: readonly ExecutorRunSummary[]): Map<string, Omit<JobRunCounts, 'job'>> {
  const byJob = new Map<string, Omit<JobRunCounts, 'job'>>();
  for (const summary of summaries) {
    for (const j of summary.jobs) {
      const sum = byJob.get(j.job) ?? { runs: 0, failures: 0, timedOut: 0, lastFailureAt: null };
      sum.runs += j.runs;
      sum.failures += j.failures;
      sum.timedOut += j.timedOut;
      if (j.lastFailureAt !== null && (sum.lastFailureAt === null || j.lastFailureAt > sum.lastFailureAt)) sum.lastFailureAt = j.lastFailureAt;
      byJob.set(j.job, sum);
    }
  }
  return new Map([...byJob].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

// ---------------------------------------------------------------------------------------------
// The shell: talking to executors.

/** Throws `validation` unless `runId` looks like a run id. */
export function assertRunId(runId: string): void {
  if (runId.length > RUN_ID_MAX_LENGTH || !RUN_ID_PATTERN.test(runId)) {
    const message = `runId: '${runId.slice(0, 80)}' is not a run id (lower-case letters, digits and '-', at most ${RUN_ID_MAX_LENGTH})`;
    throw new OrreryError('validation', message, { details: { issues: [{ field: 'runId', rule: 'pattern', message }] } });
  }
}

/** Throws `unavailable` (503) naming `ORRERY_CLUSTER_TOKEN` when there is no token. */
export function requireClusterToken(options: RunsClientOptions): string {
  if (!options.clusterToken) {
    throw new OrreryError('unavailable', 'run history and logs need the cluster token: set ORRERY_CLUSTER_TOKEN (the executors\' token) for this process', { details: { reason: 'no-cluster-token', env: 'ORRERY_CLUSTER_TOKEN' } });
  }
  return options.clusterToken;
}

/** The base URL of an executor's history API, or why it has none (pure). */
export function executorBaseUrl(executor: RunExecutor): { ok: true; url: URL } | { ok: false; unavailable: UnavailableExecutor } {
  const no = (reason: UnavailableReason, message: string) => ({ ok: false as const, unavailable: { executor: executor.name, reason, message } });
  if (!executor.online) return no('offline', `executor '${executor.name}' is offline: its run history cannot be read until it is back`);
  if (!executor.httpUrl) return no('no-http-api', `executor '${executor.name}' serves no history API (started without --http-port)`);
  let url: URL;
  try {
    url = new URL(executor.httpUrl);
  } catch {
    return no('no-http-api', `executor '${executor.name}' advertises an invalid httpUrl`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    return no('no-http-api', `executor '${executor.name}' advertises an httpUrl that is not a plain http(s) base URL`);
  }
  return { ok: true, url };
}

/**
 * What one request to an executor gave: `headersIn()` stops the answer's timeout (a body then
 * streams at the reader's pace) and keeps the caller's signal connected; `done()` lets go of both.
 */
type Call =
  | { ok: true; response: Response; headersIn(): void; done(): void }
  | { ok: false; unavailable: UnavailableExecutor };

/** Sends one GET to an executor's history API (the path built by the caller from validated parts). */
async function callExecutor(executor: RunExecutor, path: string, query: Record<string, string>, options: RunsClientOptions, extra: { range?: string; signal?: AbortSignal } = {}): Promise<Call> {
  const token = requireClusterToken(options);
  const base = executorBaseUrl(executor);
  if (!base.ok) return base;
  const url = new URL(base.url.href);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const controller = new AbortController();
  const timeoutMs = options.timeoutMs ?? DEFAULT_EXECUTOR_TIMEOUT_MS;
  const timer = setTimeout(() => controller.abort(new OrreryError('timeout', 'executor timeout')), timeoutMs);
  const onAbort = () => controller.abort(extra.signal?.reason);
  extra.signal?.addEventListener('abort', onAbort, { once: true });
  const headersIn = () => clearTimeout(timer);
  const done = () => {
    clearTimeout(timer);
    extra.signal?.removeEventListener('abort', onAbort);
  };
  const name = executor.name;
  try {
    const response = await (options.fetch ?? fetch)(url, {
      method: 'GET',
      redirect: 'manual',
      signal: controller.signal,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json, text/plain', ...(extra.range ? { range: extra.range } : {}) },
    });
    return { ok: true, response, headersIn, done };
  } catch (error) {
    done();
    if (extra.signal?.aborted) throw new OrreryError('closed', 'request cancelled');
    if (controller.signal.aborted) return { ok: false, unavailable: { executor: name, reason: 'timeout', message: `executor '${name}' did not answer within ${timeoutMs} ms` } };
    const cause = toError(error);
    const detail = (cause.cause as { code?: unknown } | undefined)?.code;
    return { ok: false, unavailable: { executor: name, reason: 'unreachable', message: `executor '${name}' cannot be reached at ${base.url.origin}${typeof detail === 'string' ? ` (${detail})` : ''}` } };
  }
}

/** Reads a response body as JSON, at most `max` bytes; undefined when it is too big or not JSON. */
async function readJsonBody(response: Response, max: number): Promise<{ ok: true; value: unknown } | { ok: false; problem: string }> {
  if (!response.body) return { ok: false, problem: 'an empty answer' };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await reader.cancel().catch(() => undefined); // the answer is refused whatever cancel says
        return { ok: false, problem: `an answer over ${max} bytes` };
      }
      chunks.push(value);
    }
  } catch (error) {
    return { ok: false, problem: `an answer cut short (${toError(error).message})` };
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { ok: false, problem: 'an answer that is not JSON' };
  }
}

/** Discards a body we do not read (frees the connection). */
function discard(response: Response): void {
  response.body?.cancel().catch(() => undefined); // nothing depends on it
}

/** An executor's error answer as a reason (401/403: refused; 404 history-off; else bad-answer). */
async function refusal(executor: string, response: Response, max: number): Promise<UnavailableExecutor> {
  const body = await readJsonBody(response, Math.min(max, 64 * 1024));
  const details = body.ok && typeof body.value === 'object' && body.value !== null ? (body.value as { details?: { reason?: unknown } }).details : undefined;
  if (response.status === 401 || response.status === 403) {
    return { executor, reason: 'refused', message: `executor '${executor}' refused the cluster token (HTTP ${response.status}): it has another ORRERY_CLUSTER_TOKEN` };
  }
  if (response.status === 404 && details?.reason === 'history-off') {
    return { executor, reason: 'history-off', message: `executor '${executor}' keeps no run history API: it was started without ORRERY_CLUSTER_TOKEN` };
  }
  return { executor, reason: 'bad-answer', message: `executor '${executor}' answered HTTP ${response.status}` };
}

/** What {@link listRuns} answers. */
export interface RunsListing extends RunsPage {
  /** Executors whose runs are missing from the page, and why. */
  unavailable: UnavailableExecutor[];
}

/** Options of {@link listRuns}. */
export interface ListRunsOptions {
  /** 1..{@link MAX_RUNS_LIMIT}; default {@link DEFAULT_RUNS_LIMIT}. */
  limit?: number;
  /** Only runs started strictly before this instant (epoch ms): the previous page's `nextBefore`. */
  before?: number;
}

/** One executor's runs of `job`. */
async function executorRuns(executor: RunExecutor, job: string, ask: number, before: number | undefined, options: RunsClientOptions): Promise<{ ok: true; answer: RunsAnswer } | { ok: false; unavailable: UnavailableExecutor }> {
  const call = await callExecutor(executor, '/runs', { job, limit: String(ask), ...(before !== undefined ? { before: String(before) } : {}) }, options);
  if (!call.ok) return call;
  const max = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  try {
    if (call.response.status !== 200) return { ok: false, unavailable: await refusal(executor.name, call.response, max) };
    const body = await readJsonBody(call.response, max);
    if (!body.ok || !Array.isArray(body.value)) {
      return { ok: false, unavailable: { executor: executor.name, reason: 'bad-answer', message: `executor '${executor.name}' sent ${body.ok ? 'something that is not a list of runs' : body.problem}` } };
    }
    const runs = body.value.flatMap((r) => toRunView(r, job) ?? []);
    return { ok: true, answer: { runs, full: body.value.length >= ask } };
  } finally {
    call.done();
  }
}

/**
 * A job's runs merged from every executor of the namespace (see the module header): concurrently,
 * each with a timeout, newest first, paged by `before`.
 */
export async function listRuns(directory: RunDirectory, job: string, options: ListRunsOptions, client: RunsClientOptions): Promise<RunsListing> {
  requireClusterToken(client);
  const limit = options.limit ?? DEFAULT_RUNS_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_RUNS_LIMIT) {
    const message = `limit: must be an integer from 1 to ${MAX_RUNS_LIMIT}`;
    throw new OrreryError('validation', message, { details: { issues: [{ field: 'limit', rule: 'range', message }] } });
  }
  // One more than the page: an executor that sends exactly the page may hold older runs.
  const ask = Math.min(MAX_RUNS_LIMIT, limit + 1);
  const [executors, inProgress] = await Promise.all([directory.executors(), directory.inProgress(job)]);
  const unavailable: UnavailableExecutor[] = [];
  const answers: RunsAnswer[] = [{ runs: inProgress.map(runningView), full: false }];
  await Promise.all(executors.map(async (executor) => {
    const got = await executorRuns(executor, job, ask, options.before, client);
    if (got.ok) answers.push(got.answer);
    else unavailable.push(got.unavailable);
  }));
  unavailable.sort((a, b) => (a.executor < b.executor ? -1 : a.executor > b.executor ? 1 : 0));
  return { ...mergeRuns(answers, { limit, before: options.before }), unavailable };
}

/** What {@link fetchRunSummaries} answers. */
export interface RunSummaries {
  /** The executors that answered, by name, with their counts. */
  summaries: ExecutorRunSummary[];
  /** Executors whose counts are missing, by name, and why (`offline` ones included). */
  unavailable: UnavailableExecutor[];
}

/** One executor's summary of the runs that ended at or after `since`. */
async function executorRunSummary(executor: RunExecutor, since: number, options: RunsClientOptions): Promise<{ ok: true; summary: ExecutorRunSummary } | { ok: false; unavailable: UnavailableExecutor }> {
  const call = await callExecutor(executor, '/runs/summary', { since: String(since) }, options);
  if (!call.ok) return call;
  const max = Math.min(options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES, SUMMARY_MAX_ANSWER_BYTES);
  const bad = (problem: string) => ({ ok: false as const, unavailable: { executor: executor.name, reason: 'bad-answer' as const, message: `executor '${executor.name}' sent ${problem}` } });
  try {
    const { response } = call;
    if (response.status !== 200) {
      const why = await refusal(executor.name, response, max);
      // An executor older than /runs/summary takes it for a run id (400) or knows no such route (404).
      if (why.reason === 'bad-answer' && (response.status === 400 || response.status === 404)) {
        return { ok: false, unavailable: { ...why, message: `${why.message} to /runs/summary (an executor older than the run summary?)` } };
      }
      return { ok: false, unavailable: why };
    }
    const body = await readJsonBody(response, max);
    if (!body.ok) return bad(body.problem);
    const checked = checkRunSummary(body.value, since);
    if (!checked.ok) return bad(checked.problem);
    return { ok: true, summary: { executor: executor.name, jobs: checked.jobs } };
  } finally {
    call.done();
  }
}

/**
 * Every executor's count of the runs that **ended** at or after `since` (epoch ms), per job, from
 * their run histories (`GET /runs/summary`): every executor of the namespace asked at once, each
 * with the timeout and the answer's size bound; an offline one, or one that does not answer,
 * refuses or answers nonsense, is named in `unavailable`. Throws `unavailable` without a cluster
 * token, `validation` for a `since` that is not a non-negative integer.
 */
export async function fetchRunSummaries(directory: RunDirectory, since: number, client: RunsClientOptions): Promise<RunSummaries> {
  requireClusterToken(client);
  if (!Number.isSafeInteger(since) || since < 0) {
    const message = 'since: must be a non-negative integer (epoch ms)';
    throw new OrreryError('validation', message, { details: { issues: [{ field: 'since', rule: 'minimum', message }] } });
  }
  const executors = await directory.executors();
  const summaries: ExecutorRunSummary[] = [];
  const unavailable: UnavailableExecutor[] = [];
  await Promise.all(executors.map(async (executor) => {
    const got = await executorRunSummary(executor, since, client);
    if (got.ok) summaries.push(got.summary);
    else unavailable.push(got.unavailable);
  }));
  const byName = <T extends { executor: string }>(a: T, b: T) => (a.executor < b.executor ? -1 : a.executor > b.executor ? 1 : 0);
  return { summaries: summaries.sort(byName), unavailable: unavailable.sort(byName) };
}

/** Where a run lives: its executor, and its record (finished) or its claim (in progress). */
export interface LocatedRun {
  executor: RunExecutor;
  run: RunView;
}

/** One executor's record of a run; `missing` when it has none. */
async function executorRecord(executor: RunExecutor, job: string, runId: string, options: RunsClientOptions, signal?: AbortSignal): Promise<{ ok: true; run: RunView | 'missing' } | { ok: false; unavailable: UnavailableExecutor }> {
  const call = await callExecutor(executor, `/runs/${encodeURIComponent(runId)}`, {}, options, signal ? { signal } : {});
  if (!call.ok) return call;
  const max = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  try {
    const { response } = call;
    if (response.status === 404) {
      const why = await refusal(executor.name, response, max);
      return why.reason === 'history-off' ? { ok: false, unavailable: why } : { ok: true, run: 'missing' };
    }
    if (response.status !== 200) return { ok: false, unavailable: await refusal(executor.name, response, max) };
    const body = await readJsonBody(response, max);
    const run = body.ok ? toRunView(body.value, job) : undefined;
    if (body.ok && run === undefined && typeof body.value === 'object' && body.value !== null && (body.value as { job?: unknown }).job !== job) return { ok: true, run: 'missing' };
    if (!run || run.runId !== runId) return { ok: false, unavailable: { executor: executor.name, reason: 'bad-answer', message: `executor '${executor.name}' sent something that is not run '${runId}'` } };
    return { ok: true, run };
  } catch (error) {
    if (signal?.aborted) throw new OrreryError('closed', 'request cancelled');
    return { ok: false, unavailable: { executor: executor.name, reason: 'timeout', message: `executor '${executor.name}' did not finish its answer (${toError(error).message})` } };
  } finally {
    call.done();
  }
}

/** Options of {@link getRun} and {@link readLog}: a hint of the executor holding the run. */
export interface FindRunOptions {
  /** The executor that ran it, if the caller knows (must be one of the namespace's). */
  executor?: string;
}

/**
 * Finds run `runId` of `job`: a run in progress from the shard nodes, else its record from the
 * executor hinted, else from every online executor at once. `not-found` when no executor that
 * answered has it (the details name those that did not); `unavailable` when it may be on an
 * executor that could not be asked.
 */
export async function getRun(directory: RunDirectory, job: string, runId: string, options: FindRunOptions, client: RunsClientOptions): Promise<LocatedRun> {
  requireClusterToken(client);
  assertRunId(runId);
  if (options.executor !== undefined && !NODE_NAME_PATTERN.test(options.executor)) {
    const message = `executor: '${options.executor.slice(0, 80)}' is not an executor name`;
    throw new OrreryError('validation', message, { details: { issues: [{ field: 'executor', rule: 'pattern', message }] } });
  }
  const [executors, inProgress] = await Promise.all([directory.executors(), directory.inProgress(job)]);
  const byName = new Map(executors.map((e) => [e.name, e]));
  if (options.executor !== undefined && !byName.has(options.executor)) {
    throw new OrreryError('not-found', `no executor '${options.executor}' in this namespace`, { details: { executor: options.executor } });
  }
  const running = inProgress.find((r) => r.runId === runId);
  if (running) {
    const executor = byName.get(running.executor) ?? { name: running.executor, online: false };
    return { executor, run: runningView(running) };
  }
  const unavailable: UnavailableExecutor[] = [];
  const ask = async (executor: RunExecutor): Promise<LocatedRun | undefined> => {
    const got = await executorRecord(executor, job, runId, client);
    if (!got.ok) {
      unavailable.push(got.unavailable);
      return undefined;
    }
    return got.run === 'missing' ? undefined : { executor, run: got.run };
  };
  const hinted = options.executor !== undefined ? byName.get(options.executor) : undefined;
  if (hinted) {
    const found = await ask(hinted);
    if (found) return found;
  }
  const others = executors.filter((e) => e !== hinted);
  const results = await Promise.all(others.map(ask));
  const found = results.find((r) => r !== undefined);
  if (found) return found;
  // A run that started a moment ago: not in the mirror's shard nodes yet, and in no history.
  const late = (await directory.inProgressNow?.(job))?.find((r) => r.runId === runId);
  if (late) return { executor: byName.get(late.executor) ?? { name: late.executor, online: false }, run: runningView(late) };
  const unanswered = unavailable.filter((u) => u.reason !== 'offline');
  if (unanswered.length > 0) {
    throw new OrreryError('unavailable', `run '${runId}' of job '${job}' was not found, but ${unanswered.map((u) => u.message).join('; ')}`, { details: { runId, job, unavailable } });
  }
  throw new OrreryError('not-found', `run '${runId}' of job '${job}' is not in any reachable executor's history (it may have been pruned${unavailable.length > 0 ? `, or be on an offline executor: ${unavailable.map((u) => u.executor).join(', ')}` : ''})`, { details: { runId, job, unavailable } });
}

/** Options of {@link readLog}. */
export interface ReadLogOptions extends FindRunOptions {
  stream?: LogStream;
  /** From this byte (default 0). Not with `range`. */
  offset?: number;
  /** One byte range (from {@link parseByteRange}). */
  range?: ByteRange;
  signal?: AbortSignal;
}

/** A log (or part of it), streaming from its executor. */
export interface LogAnswer {
  /** 200 (from `offset`), 206 (a range), 416 (a range past the end: no body). */
  status: 200 | 206 | 416;
  /** The log's whole size now, in bytes. */
  size: number;
  /** Bytes in `body`. */
  length: number;
  /** `bytes first-last/size` for a 206, `bytes *\/size` for a 416. */
  contentRange?: string;
  /** The bytes (null for a 416 or an empty answer); at most `length`, streamed. */
  body: Readable | null;
  run: RunView;
  executor: string;
}

const DIGITS = /^\d{1,15}$/;

/**
 * An executor's body as a stream of at most `limit` bytes: it reads only when its consumer asks,
 * stops reading (and cancels the body, freeing the connection) at `limit`, and fails when a read
 * waits more than `idleMs` for bytes. `onEnd` is called once when it ends, fails or is destroyed.
 */
function boundedBody(source: WebReadableStream<Uint8Array>, limit: number, idleMs: number, onEnd: () => void): Readable {
  const reader = source.getReader();
  let left = limit;
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    onEnd();
    reader.cancel().catch(() => undefined); // a body already over or failed: nothing to cancel
  };
  return new Readable({
    read() {
      const timer = setTimeout(() => this.destroy(new OrreryError('timeout', `the executor sent nothing for ${idleMs} ms`)), idleMs);
      reader.read().then(({ done, value }) => {
        clearTimeout(timer);
        if (this.destroyed) return;
        if (done) {
          end();
          this.push(null);
          return;
        }
        const part = value.byteLength > left ? value.subarray(0, left) : value;
        left -= part.byteLength;
        this.push(Buffer.from(part.buffer, part.byteOffset, part.byteLength));
        // Enough: what lies past the range asked for (or the length announced) is never read.
        if (left <= 0) {
          end();
          this.push(null);
        }
      }, (error: unknown) => {
        clearTimeout(timer);
        this.destroy(toError(error));
      });
    },
    destroy(error, callback) {
      end();
      callback(error);
    },
  });
}

/** The most bytes an answer to `range` can hold (pure); undefined: no bound from the request. */
function rangeLength(range: ByteRange | undefined): number | undefined {
  if (!range) return undefined;
  if (range.kind === 'suffix') return range.length;
  return range.last === undefined ? undefined : range.last - range.first + 1;
}

/**
 * Reads run `runId`'s log from its executor (see {@link getRun} for how it is found): from
 * `offset`, or one byte range. The body streams (bounded memory); a log that is gone is
 * `not-found`, an executor that cannot be asked `unavailable`.
 */
export async function readLog(directory: RunDirectory, job: string, runId: string, options: ReadLogOptions, client: RunsClientOptions): Promise<LogAnswer> {
  const stream = options.stream ?? 'stdout';
  if (stream !== 'stdout' && stream !== 'stderr') {
    const message = "stream: must be 'stdout' or 'stderr'";
    throw new OrreryError('validation', message, { details: { issues: [{ field: 'stream', rule: 'one-of', message }] } });
  }
  if (options.offset !== undefined && (!Number.isSafeInteger(options.offset) || options.offset < 0)) {
    const message = 'offset: must be a non-negative integer';
    throw new OrreryError('validation', message, { details: { issues: [{ field: 'offset', rule: 'minimum', message }] } });
  }
  if (options.offset !== undefined && options.range !== undefined) {
    const message = "offset: cannot be used with a Range header (not-with-range)";
    throw new OrreryError('validation', message, { details: { issues: [{ field: 'offset', rule: 'not-with-range', message }] } });
  }
  const located = await getRun(directory, job, runId, options, client);
  return readLogFrom(located, stream, options, client);
}

/** Reads a located run's log (the second half of {@link readLog}). */
export async function readLogFrom(located: LocatedRun, stream: LogStream, options: Pick<ReadLogOptions, 'offset' | 'range' | 'signal'>, client: RunsClientOptions): Promise<LogAnswer> {
  const { executor, run } = located;
  const call = await callExecutor(executor, `/runs/${encodeURIComponent(run.runId)}/log`, { stream, ...(options.offset ? { offset: String(options.offset) } : {}) }, client, {
    ...(options.range ? { range: formatByteRange(options.range) } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!call.ok) throw new OrreryError('unavailable', `the log of run '${run.runId}' cannot be read: ${call.unavailable.message}`, { details: { runId: run.runId, ...call.unavailable } });
  const max = client.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  // Headers came: the timeout stops here, the body streams as fast as the reader takes it. The
  // caller's signal stays connected until the body ends (a reader that left stops the transfer).
  call.headersIn();
  let bodyHandedOver = false;
  try {
    return await logAnswer(located, call, max, options.range, client, () => { bodyHandedOver = true; });
  } finally {
    if (!bodyHandedOver) call.done();
  }
}

/** The answer of {@link readLogFrom} from the executor's response; `handOver` when the body streams on. */
async function logAnswer(located: LocatedRun, call: Extract<Call, { ok: true }>, max: number, range: ByteRange | undefined, client: RunsClientOptions, handOver: () => void): Promise<LogAnswer> {
  const { executor, run } = located;
  const { response } = call;
  if (response.status === 404) {
    const why = await refusal(executor.name, response, max);
    if (why.reason === 'history-off') throw new OrreryError('unavailable', why.message, { details: { runId: run.runId, ...why } });
    // A run in progress that has printed nothing on this stream has no log file yet.
    if (run.status === 'running') return { status: 200, size: 0, length: 0, body: null, run, executor: executor.name };
    throw new OrreryError('not-found', `the log of run '${run.runId}' is gone from executor '${executor.name}' (pruned)`, { details: { runId: run.runId, executor: executor.name, reason: 'expired' } });
  }
  if (response.status !== 200 && response.status !== 206 && response.status !== 416) {
    const why = await refusal(executor.name, response, max);
    throw new OrreryError(response.status === 400 ? 'validation' : 'unavailable', why.message, { details: { runId: run.runId, ...why } });
  }
  const sizeHeader = response.headers.get('x-log-size') ?? '';
  const lengthHeader = response.headers.get('content-length') ?? '0';
  const contentRange = response.headers.get('content-range') ?? undefined;
  if (!DIGITS.test(sizeHeader) || (response.status !== 416 && !DIGITS.test(lengthHeader)) || (contentRange !== undefined && !/^bytes (\d{1,15}-\d{1,15}|\*)\/\d{1,15}$/.test(contentRange))) {
    discard(response);
    throw new OrreryError('unavailable', `executor '${executor.name}' sent a log answer without valid sizes`, { details: { runId: run.runId, executor: executor.name, reason: 'bad-answer' } });
  }
  const size = Number(sizeHeader);
  if (response.status === 416) {
    discard(response);
    return { status: 416, size, length: 0, contentRange: `bytes */${size}`, body: null, run, executor: executor.name };
  }
  // Never more than was asked for, whatever the executor announces.
  const length = Math.min(Number(lengthHeader), rangeLength(range) ?? Infinity);
  let body: Readable | null = null;
  if (length > 0 && response.body) {
    body = boundedBody(response.body as unknown as WebReadableStream<Uint8Array>, length, client.bodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS, call.done);
    handOver();
  } else {
    discard(response);
  }
  return { status: response.status as 200 | 206, size, length, ...(contentRange ? { contentRange } : {}), body, run, executor: executor.name };
}

/** What a follower of a log sees, in order: chunks, then exactly one of the three endings. */
export type FollowEvent =
  /** Text of the log from byte `offset`; the next chunk starts at `next`. */
  | { type: 'log'; offset: number; next: number; text: string }
  /** The run ended (its record appeared): its outcome. */
  | { type: 'end'; run: RunView }
  /** The run's record and log are gone (pruned). */
  | { type: 'expired'; runId: string; message: string }
  /** The executor holding the run went offline or stopped answering. */
  | { type: 'executor-offline'; executor: string; message: string };

/** Options of {@link followLog}. */
export interface FollowLogOptions extends FindRunOptions {
  stream?: LogStream;
  /** Start at this byte (default 0). */
  offset?: number;
  /** The run, already found by {@link getRun} (the follower then does not look it up again). */
  located?: LocatedRun;
  /** Stops the follower (a disconnected client). */
  signal?: AbortSignal;
  /** Default {@link DEFAULT_FOLLOW_POLL_MS}. */
  pollMs?: number;
  /** Default {@link DEFAULT_RECORD_GRACE_MS}. */
  recordGraceMs?: number;
  /** Default {@link DEFAULT_OFFLINE_AFTER_MS}. */
  offlineAfterMs?: number;
  /** The clock (epoch ms). */
  now?: () => number;
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Reads a whole small body (a poll's chunk: {@link readLogFrom} bounds it to the range asked for). */
async function drain(body: Readable | null): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const parts: Buffer[] = [];
  for await (const part of body) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/**
 * Follows run `runId`'s log: polls its executor with byte ranges every `pollMs` and yields the new
 * text, until the run's record appears (`end`, after the rest of the log), the run and its log are
 * gone (`expired`), or its executor goes offline or stops answering for `offlineAfterMs`
 * (`executor-offline`). Throws before the first event when the run cannot be found (see
 * {@link getRun}). Each poll asks for at most {@link FOLLOW_CHUNK_BYTES}: memory stays bounded.
 * Stops, yielding nothing more, when `signal` aborts.
 */
export async function* followLog(directory: RunDirectory, job: string, runId: string, options: FollowLogOptions, client: RunsClientOptions): AsyncGenerator<FollowEvent, void, void> {
  const stream = options.stream ?? 'stdout';
  const pollMs = options.pollMs ?? DEFAULT_FOLLOW_POLL_MS;
  const graceMs = options.recordGraceMs ?? DEFAULT_RECORD_GRACE_MS;
  const offlineAfterMs = options.offlineAfterMs ?? DEFAULT_OFFLINE_AFTER_MS;
  const now = options.now ?? Date.now;
  const signal = options.signal;
  let located = options.located ?? await getRun(directory, job, runId, options, client);
  let offset = options.offset ?? 0;
  const decoder = new StringDecoder('utf8');
  let failingSince: number | undefined;
  let missingSince: number | undefined;
  const offline = (message: string): FollowEvent => ({ type: 'executor-offline', executor: located.executor.name, message });

  // Reads what the log holds past `offset`; false when the executor could not be asked.
  async function* readNew(): AsyncGenerator<FollowEvent, boolean, void> {
    for (;;) {
      let answer: LogAnswer;
      try {
        answer = await readLogFrom(located, stream, { range: { kind: 'from', first: offset, last: offset + FOLLOW_CHUNK_BYTES - 1 }, ...(signal ? { signal } : {}) }, client);
      } catch (error) {
        if (signal?.aborted) return true;
        if (hasErrorCode(error, 'unavailable')) return false;
        if (hasErrorCode(error, 'not-found')) return true; // no log (yet, or any more): the record decides
        throw error;
      }
      if (answer.status === 416 || answer.length === 0) {
        answer.body?.destroy();
        return true;
      }
      // Only the range asked for: an executor that ignores Range (a 200 with a body) or sends
      // another range is not answering the follower (its body is left unread).
      if (answer.status !== 206 || !answer.contentRange?.startsWith(`bytes ${offset}-`)) {
        answer.body?.destroy();
        return false;
      }
      let bytes: Buffer;
      try {
        bytes = await drain(answer.body);
      } catch {
        // Aborted (the reader left), stalled past the idle timeout, or cut short.
        return signal?.aborted === true;
      }
      if (bytes.length === 0) return true;
      const start = offset;
      offset += bytes.length;
      const text = decoder.write(bytes);
      if (text !== '') yield { type: 'log', offset: start, next: offset, text };
      if (bytes.length < FOLLOW_CHUNK_BYTES) return true;
    }
  }

  while (!signal?.aborted) {
    const answered = yield* readNew();
    if (signal?.aborted) return;
    if (located.run.status !== 'running') {
      // Finished (the record is in hand): the log was read to its end just now.
      const rest = decoder.end();
      if (rest !== '') yield { type: 'log', offset, next: offset, text: rest };
      yield { type: 'end', run: located.run };
      return;
    }
    const executors = await directory.executors();
    const current = executors.find((e) => e.name === located.executor.name);
    if (!current?.online) {
      yield offline(`executor '${located.executor.name}' went offline while run '${runId}' was running: the rest of its log is on that executor`);
      return;
    }
    located = { ...located, executor: current };
    if (!answered) {
      failingSince ??= now();
      if (now() - failingSince >= offlineAfterMs) {
        yield offline(`executor '${current.name}' has not answered for ${Math.round((now() - failingSince) / 1000)} s`);
        return;
      }
    } else {
      failingSince = undefined;
    }
    const stillRunning = (await directory.inProgress(job)).some((r) => r.runId === runId);
    if (!stillRunning) {
      const got = await executorRecord(current, job, runId, client, signal).catch((error: unknown) => {
        if (signal?.aborted) return undefined;
        throw error;
      });
      if (got === undefined) return;
      if (got.ok && got.run !== 'missing') {
        located = { ...located, run: got.run };
        continue; // read the rest of the log, then end
      }
      if (got.ok) {
        // No record yet: it is saved just after the outcome reaches ZooKeeper. Past the grace: gone.
        missingSince ??= now();
        if (now() - missingSince >= graceMs) {
          yield { type: 'expired', runId, message: `run '${runId}' is no longer running and executor '${current.name}' holds no record of it (pruned)` };
          return;
        }
      }
    }
    await pause(pollMs, signal);
  }
}

// ---------------------------------------------------------------------------------------------
// The CLI's directory: ZooKeeper.

/** A {@link RunDirectory} read from ZooKeeper (the CLI's; the API reads its cache). */
export function runDirectoryFromZk(zk: ZkClient, namespace: string): RunDirectory {
  const getData = async (path: string): Promise<Buffer | null | undefined> => {
    try {
      return (await zk.get(path)).data;
    } catch (error) {
      if (hasErrorCode(error, 'no-node')) return undefined;
      throw error;
    }
  };
  const children = async (path: string): Promise<string[]> => {
    try {
      return await zk.getChildren(path);
    } catch (error) {
      if (hasErrorCode(error, 'no-node')) return [];
      throw error;
    }
  };
  return {
    async executors() {
      const names = (await children(paths.executors(namespace))).filter((n) => NODE_NAME_PATTERN.test(n)).sort();
      return Promise.all(names.map(async (name): Promise<RunExecutor> => {
        const data = await getData(paths.executorPresence(namespace, name));
        if (data === undefined) return { name, online: false };
        const info = inspectNode(data, paths.executorPresence(namespace, name), checkExecutorInfo);
        return { name, online: true, ...(info.ok && info.value.httpUrl ? { httpUrl: info.value.httpUrl } : {}) };
      }));
    },
    async inProgress(job) {
      const items = (await children(paths.jobShards(namespace, job))).filter((c) => /^\d{1,5}$/.test(c));
      const runs = await Promise.all(items.map(async (child) => {
        const item = Number(child);
        const data = await getData(paths.jobShard(namespace, job, item));
        if (data === undefined) return undefined;
        const state = inspectNode(data, paths.jobShard(namespace, job, item), checkShardState);
        return state.ok ? inProgressOf(job, item, state.value) : undefined;
      }));
      return runs.filter((r): r is RunInProgress => r !== undefined);
    },
  };
}

/** The run in progress of a shard state, if any (pure). */
export function inProgressOf(job: string, item: number, state: ShardState): RunInProgress | undefined {
  if (state.state !== 'running') return undefined;
  return { runId: state.runId, job, item, executor: state.executor, startedAt: state.startedAt, fireTime: state.fireTime, attempt: state.attempt };
}
