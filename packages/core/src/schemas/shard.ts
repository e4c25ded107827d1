/**
 * ShardState: the data of `paths.jobShard` — the state of one item of one job. A claim and a
 * completion are each one compare-and-set on this node (DESIGN.md flow 4). Browser-safe.
 */
import { Type, type Static } from '@sinclair/typebox';
import { validationError } from '../errors.js';
import { checkWith } from './validate.js';

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
    message: Type.String({ default: '', maxLength: 4096 }),
    /** The last 4 KB of stdout and stderr. */
    stdoutTail: Type.String({ default: '', maxLength: 8192 }),
    stderrTail: Type.String({ default: '', maxLength: 8192 }),
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

export const checkShardOutcome = (input: unknown) => checkWith<ShardOutcome>(ShardOutcomeSchema, input, 'shard outcome');
export const checkShardState = (input: unknown) => checkWith<ShardState>(ShardStateSchema, input, 'shard state');
export function parseShardState(input: unknown): ShardState {
  const r = checkShardState(input);
  if (!r.ok) throw validationError(r.issues, 'shard state');
  return r.value;
}
