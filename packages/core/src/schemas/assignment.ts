/**
 * Assignment: the allocator's output for one job (`paths.jobAssignment`), its per-executor summary
 * (`paths.executorAssignment`) and the job leader's `applied` marker. Browser-safe.
 */
import { Type, type Static } from '@sinclair/typebox';
import { validationError } from '../errors.js';
import { checkWith } from './validate.js';

/** Why a shard has no executor. */
export const UNASSIGNED_REASONS = [
  'no-eligible-executor',
  'no-preferred-executor-online',
  'no-executor-has-handler',
  'all-drained',
] as const;
export type UnassignedReason = (typeof UNASSIGNED_REASONS)[number];

const Item = Type.Integer({ minimum: 0, maximum: 99_999 });

export const AssignmentSchema = Type.Object(
  {
    /** Increases with every change of this job's assignment. */
    epoch: Type.Integer({ minimum: 0 }),
    /** The writing allocator leader's epoch (its latch node's czxid); readers ignore older ones. */
    allocatorEpoch: Type.Number({ minimum: 0 }),
    /** Executor name → its items, ascending. */
    items: Type.Record(Type.String(), Type.Array(Item)),
    /** Items that could not be placed, each with the reason. */
    unassigned: Type.Array(Type.Object({ item: Item, reason: Type.Union(UNASSIGNED_REASONS.map((r) => Type.Literal(r))) }, { additionalProperties: false }), { default: [] }),
    /** Epoch ms of the write. */
    writtenAt: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);
/** The allocator's output for one job. */
export type Assignment = Static<typeof AssignmentSchema>;

export const ExecutorAssignmentSchema = Type.Object(
  {
    allocatorEpoch: Type.Number({ minimum: 0 }),
    /** Job name → the job's assignment epoch and this executor's items in it. */
    jobs: Type.Record(Type.String(), Type.Object({ epoch: Type.Integer({ minimum: 0 }), items: Type.Array(Item) }, { additionalProperties: false })),
    writtenAt: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);
/** The allocator's summary for one executor: which jobs it is in. */
export type ExecutorAssignment = Static<typeof ExecutorAssignmentSchema>;

export const AppliedSchema = Type.Object(
  {
    /** The assignment epoch the job leader made safe to run. */
    epoch: Type.Integer({ minimum: 0 }),
    allocatorEpoch: Type.Number({ minimum: 0, default: 0 }),
    /** That assignment's executor → items: what the owners run now. */
    items: Type.Record(Type.String(), Type.Array(Item), { default: {} }),
  },
  { additionalProperties: false },
);
/** The job leader's marker: owners run the items of this assignment epoch. */
export type Applied = Static<typeof AppliedSchema>;

export const ShardingStateSchema = Type.Object(
  {
    allocatorEpoch: Type.Number({ minimum: 0 }),
    /** Online, non-drained executors of the last round (joiners are measured against this). */
    members: Type.Array(Type.String()),
    /** Rounds that wrote something for this namespace. */
    round: Type.Integer({ minimum: 0 }),
    writtenAt: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);
/** The allocator's state for one namespace (`paths.namespaceSharding`). */
export type ShardingState = Static<typeof ShardingStateSchema>;

export const ReshardRequestSchema = Type.Object(
  {
    namespace: Type.String({ minLength: 1 }),
    /** Only this job; absent: every job of the namespace. */
    job: Type.Optional(Type.String({ minLength: 1 })),
    requestedAt: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);
/** A request for a rebalancing round (`orrery reshard`). */
export type ReshardRequest = Static<typeof ReshardRequestSchema>;

export const checkShardingState = (input: unknown) => checkWith<ShardingState>(ShardingStateSchema, input, 'sharding state');
export const checkReshardRequest = (input: unknown) => checkWith<ReshardRequest>(ReshardRequestSchema, input, 'reshard request');
export const checkAssignment = (input: unknown) => checkWith<Assignment>(AssignmentSchema, input, 'assignment');
export const checkExecutorAssignment = (input: unknown) => checkWith<ExecutorAssignment>(ExecutorAssignmentSchema, input, 'executor assignment');
export const checkApplied = (input: unknown) => checkWith<Applied>(AppliedSchema, input, 'applied marker');
export function parseAssignment(input: unknown): Assignment {
  const r = checkAssignment(input);
  if (!r.ok) throw validationError(r.issues, 'assignment');
  return r.value;
}
