/**
 * ShardState: the data of `paths.jobShard` — the state of one item of one job. A claim and a
 * completion are each one compare-and-set on this node (docs/architecture.md, the shard claim protocol). Browser-safe.
 */
import { Type, type Static } from '@sinclair/typebox';
import { validationError } from '../errors.js';
import { checkWith, isPlainObject } from './validate.js';

/**
 * The most a shard node's outcome `message` holds, in UTF-8 bytes. ZooKeeper keeps the outcome and
 * this short message, never the run's output (which may hold anything the job printed); the full
 * output stays in the executor's run history.
 */
export const SHARD_MESSAGE_MAX_BYTES = 512;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * `text` cut to at most `maxBytes` UTF-8 bytes (default {@link SHARD_MESSAGE_MAX_BYTES}) on a
 * character boundary, ending in `…` when it was cut. Pure, browser-safe.
 */
export function clipShardMessage(text: string, maxBytes = SHARD_MESSAGE_MAX_BYTES): string {
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return text;
  const ellipsis = maxBytes >= 3 ? '\u2026' : ''; // 3 bytes
  let end = maxBytes - (ellipsis ? 3 : 0);
  // Step back over continuation bytes (10xxxxxx) to the start of the character that was cut.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  return decoder.decode(bytes.subarray(0, end)) + ellipsis;
}

/** How a run ended (never a numeric code). */
export const RUN_STATUSES = ['succeeded', 'failed', 'timed-out', 'aborted'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const ShardOutcomeSchema = Type.Object(
  {
    status: Type.Union(RUN_STATUSES.map((s) => Type.Literal(s))),
    /** The process's exit code; null when it was killed by a signal or is not a process. */
    exitCode: Type.Union([Type.Integer(), Type.Null()]),
    /** Epoch ms. */
    startedAt: Type.Integer({ minimum: 0 }),
    endedAt: Type.Integer({ minimum: 0 }),
    durationMs: Type.Integer({ minimum: 0 }),
    executor: Type.String(),
    runId: Type.String(),
    /** The scheduled fire time (epoch ms) this run belongs to. */
    fireTime: Type.Integer({ minimum: 0 }),
    /** 1 for the first attempt; retries and failover re-runs count up. */
    attempt: Type.Integer({ minimum: 1, default: 1 }),
    /** The claim's mzxid: the run's fencing token. */
    fencingToken: Type.Number({ minimum: 0, default: 0 }),
    /**
     * A short message: the job's own (result file, `return {message}`), else why it ended (for a
     * failure, the last non-empty line of stderr). At most {@link SHARD_MESSAGE_MAX_BYTES} UTF-8
     * bytes — `maxLength` counts UTF-16 code units, never more than the bytes, so the writer also
     * clips by bytes ({@link clipShardMessage}).
     */
    message: Type.String({ default: '', maxLength: SHARD_MESSAGE_MAX_BYTES }),
    /**
     * Legacy: the last 4 KB of stdout and stderr, written by versions before 0.x. Still accepted
     * when read so that an existing cluster's shard nodes stay valid, dropped by
     * {@link checkShardState} / {@link checkShardOutcome}, never written: job output stays on the
     * executor (its run history and logs), never in ZooKeeper.
     */
    stdoutTail: Type.Optional(Type.String({ maxLength: 8192 })),
    stderrTail: Type.Optional(Type.String({ maxLength: 8192 })),
  },
  { additionalProperties: false },
);
/** How one run of one shard ended. */
export type ShardOutcome = Static<typeof ShardOutcomeSchema>;

const Idle = Type.Object({ state: Type.Literal('idle'), last: Type.Optional(ShardOutcomeSchema) }, { additionalProperties: false });
/** A claim: who holds the shard, for which fire. */
const claimFields = {
  executor: Type.String(),
  /** The claiming executor's ZooKeeper session id (hex). */
  session: Type.String(),
  runId: Type.String(),
  fireTime: Type.Integer({ minimum: 0 }),
  startedAt: Type.Integer({ minimum: 0 }),
  attempt: Type.Integer({ minimum: 1, default: 1 }),
  /** The previous outcome, kept while a new run is in progress (or waits for its failover re-run). */
  last: Type.Optional(ShardOutcomeSchema),
};
const Running = Type.Object({ state: Type.Literal('running'), ...claimFields }, { additionalProperties: false });
/**
 * A run whose session died before it completed, marked by the job leader for a failover re-run:
 * the crashed claim's fields, and when it was marked. Only a failover claim of that fire time may
 * take the shard from here (a new attempt, with a larger fencing token).
 */
const Failover = Type.Object({ state: Type.Literal('failover'), ...claimFields, markedAt: Type.Integer({ minimum: 0 }) }, { additionalProperties: false });
export const ShardStateSchema = Type.Union([Idle, Running, Failover]);
/** The state of one item: idle (with its last outcome), running (with its claim), or failover (a crashed run waiting to be re-run). */
export type ShardState = Static<typeof ShardStateSchema>;

/**
 * An outcome as nodes written by older versions hold it, made current: the legacy output tails
 * dropped and a message longer than {@link SHARD_MESSAGE_MAX_BYTES} clipped (they allowed 4096
 * characters). Anything that is not such an outcome is returned as it is, for the schema to judge.
 */
function upgradeOutcome(input: unknown): unknown {
  if (!isPlainObject(input)) return input;
  const { stdoutTail: _stdout, stderrTail: _stderr, ...rest } = input;
  if (typeof rest.message === 'string') rest.message = clipShardMessage(rest.message);
  return rest;
}

/** Checks an outcome; one written by an older version is read without its output tails. */
export const checkShardOutcome = (input: unknown) => checkWith<ShardOutcome>(ShardOutcomeSchema, upgradeOutcome(input), 'shard outcome');
/**
 * Checks a shard node's state; the `last` outcome of a node written by an older version is read
 * without its output tails (so a claim, which carries `last` forward, never writes them again).
 */
export const checkShardState = (input: unknown) =>
  checkWith<ShardState>(ShardStateSchema, isPlainObject(input) && isPlainObject(input.last) ? { ...input, last: upgradeOutcome(input.last) } : input, 'shard state');
export function parseShardState(input: unknown): ShardState {
  const r = checkShardState(input);
  if (!r.ok) throw validationError(r.issues, 'shard state');
  return r.value;
}
