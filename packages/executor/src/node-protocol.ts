/**
 * Messages between the executor and its Node job workers (node-pool.ts, node-worker.ts), each with
 * a schema. Both sides validate every message they receive ({@link parseParentMessage},
 * {@link parseWorkerMessage}): the other side runs job code, so a message may be anything (a job
 * can call `process.send` itself). A message that does not match is dropped by the receiver and
 * logged — never a crash, never a run started or ended by it.
 *
 * Guarantees: a value these parsers return matches its type exactly as declared here (strings are
 * strings, numbers finite), with strings bounded by {@link MAX_ID_LENGTH} / {@link MAX_PATH_LENGTH}.
 * Not guaranteed: that a run id names a run the receiver knows — receivers look it up and ignore
 * unknown ones.
 */
import { Type, type Static, type TLiteral, type TObject, type TUnion } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

import { MAX_ID_LENGTH, MAX_PARENT_BATCH, MAX_PATH_LENGTH, MAX_TAIL_LENGTH, MAX_TEXT_LENGTH, splitBatch, splitParentBatch } from './node-protocol-limits.js';

export { MAX_ID_LENGTH, MAX_PARENT_BATCH, MAX_PATH_LENGTH, MAX_TAIL_LENGTH, MAX_TEXT_LENGTH, splitParentBatch };

const RunId = Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH });
const FilePath = Type.String({ minLength: 1, maxLength: MAX_PATH_LENGTH });
const EpochMs = Type.Number({ minimum: 0, maximum: 8.64e15 });
const ByteCount = Type.Integer({ minimum: 0 });

/** Executor → worker: run this (a worker runs its runs one at a time, by `startAt`, then arrival). */
export const RunMessageSchema = Type.Object({
  type: Type.Literal('run'),
  runId: RunId,
  module: FilePath,
  /** The JSON-safe part of the JobContext. */
  context: Type.Record(Type.String(), Type.Unknown()),
  stdoutPath: FilePath,
  stderrPath: FilePath,
  /** Not before this time (ms since the epoch). */
  startAt: Type.Optional(EpochMs),
  /** Each log's cap in bytes (default 64 MiB). */
  maxLogBytes: Type.Optional(Type.Integer({ minimum: 1 })),
  /** False: the executor no longer owns the run already (`ctx.isOwner()` starts false). Default true. */
  owner: Type.Optional(Type.Boolean()),
});

/**
 * Executor → worker. A worker runs its runs one at a time, in order of `startAt` (a run without one
 * is due at once), then of arrival; a run is never started before its `startAt`.
 * - `preload`: import a job module ahead of its first run.
 * - `cancel`: take back a run that has not started: the worker answers `cancelled` if it had not.
 * - `abort`: abort the running run's `ctx.signal` (a kill follows after the grace).
 * - `ownership`: what the run's `ctx.isOwner()` says from now on (running or still waiting there).
 */
export const ParentMessageSchema = Type.Union([
  RunMessageSchema,
  Type.Object({ type: Type.Literal('preload'), module: FilePath }),
  Type.Object({ type: Type.Literal('cancel'), runId: RunId }),
  Type.Object({ type: Type.Literal('abort'), runId: RunId, reason: Type.String({ maxLength: MAX_ID_LENGTH }) }),
  Type.Object({ type: Type.Literal('ownership'), runId: RunId, owner: Type.Boolean() }),
]);

/**
 * Worker → executor.
 * - `ready`: started, takes runs.
 * - `started`: the run started at `at` (the worker's clock, ms since the epoch).
 * - `cancelled`: the run was taken back before it started; it will never start there.
 * - `done`: the run ended (its log files are complete); `truncated`: bytes discarded past the cap, per stream.
 */
export const WorkerMessageSchema = Type.Union([
  Type.Object({ type: Type.Literal('ready') }),
  Type.Object({ type: Type.Literal('started'), runId: RunId, at: EpochMs }),
  Type.Object({ type: Type.Literal('cancelled'), runId: RunId }),
  Type.Object({
    type: Type.Literal('done'),
    runId: RunId,
    ok: Type.Boolean(),
    message: Type.String({ maxLength: MAX_TEXT_LENGTH }),
    stdoutTail: Type.String({ maxLength: MAX_TAIL_LENGTH }),
    stderrTail: Type.String({ maxLength: MAX_TAIL_LENGTH }),
    truncated: Type.Optional(Type.Object({ stdout: Type.Optional(ByteCount), stderr: Type.Optional(ByteCount) })),
  }),
]);

export type RunMessage = Static<typeof RunMessageSchema>;
export type ParentMessage = Static<typeof ParentMessageSchema>;
export type WorkerMessage = Static<typeof WorkerMessageSchema>;

/** What a parser says: the message, or why it was refused (for the log; never the message itself). */
export type Parsed<T> = { ok: true; message: T } | { ok: false; problem: string };

function parserFor<S extends TUnion<TObject[]>>(schema: S): (input: unknown) => Parsed<Static<S>> {
  const check = TypeCompiler.Compile(schema);
  // Per message type, for a problem that names the field (a union's own error says only "union").
  const variants = new Map(schema.anyOf.map((v) => [String((v.properties.type as TLiteral).const), TypeCompiler.Compile(v)]));
  return (input) => {
    if (check.Check(input)) return { ok: true, message: input };
    const type = typeof input === 'object' && input !== null && typeof (input as { type?: unknown }).type === 'string' ? (input as { type: string }).type : undefined;
    const variant = type === undefined ? undefined : variants.get(type);
    if (!variant) return { ok: false, problem: type === undefined ? `${Array.isArray(input) ? 'array' : typeof input}: not a message` : `unknown type '${type.slice(0, MAX_ID_LENGTH)}'` };
    const first = variant.Errors(input).First();
    return { ok: false, problem: `${type}: ${first ? `${first.path || '/'} ${first.message}` : 'not a message'}` };
  };
}

/** Validates a message a worker received from the executor. */
export const parseParentMessage = parserFor(ParentMessageSchema);
/** Validates a message the executor received from a worker. */
export const parseWorkerMessage = parserFor(WorkerMessageSchema);

/**
 * The most messages a worker sends as one (a JSON array, in order). A worker sends a run's `done`
 * with the next run's `started` when that run follows at once: one write and one IPC message a run
 * instead of two, for the worker and for the executor that reads them.
 */
export const MAX_WORKER_BATCH = 16;

/**
 * Validates what the executor received from a worker: one message, or an array of 1 to
 * {@link MAX_WORKER_BATCH} messages, each validated on its own (a malformed one is refused, the
 * others stand). An array out of bounds is refused whole.
 */
export function parseWorkerMessages(input: unknown): Array<Parsed<WorkerMessage>> {
  const { messages, problem } = splitBatch(input, MAX_WORKER_BATCH);
  return problem ? [{ ok: false, problem }] : messages.map((m) => parseWorkerMessage(m));
}
