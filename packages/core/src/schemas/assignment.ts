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
  },
  { additionalProperties: false },
);
/** The job leader's marker: owners run the items of this assignment epoch. */
export type Applied = Static<typeof AppliedSchema>;

export const checkAssignment = (input: unknown) => checkWith<Assignment>(AssignmentSchema, input, 'assignment');
export const checkExecutorAssignment = (input: unknown) => checkWith<ExecutorAssignment>(ExecutorAssignmentSchema, input, 'executor assignment');
export const checkApplied = (input: unknown) => checkWith<Applied>(AppliedSchema, input, 'applied marker');
export function parseAssignment(input: unknown): Assignment {
  const r = checkAssignment(input);
  if (!r.ok) throw validationError(r.issues, 'assignment');
  return r.value;
}
