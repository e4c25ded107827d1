/**
 * The API's answers the UI reads, derived from the console's own response schemas
 * (`@orrery/console/api-types`, type-only: nothing of the server reaches the bundle) and core's
 * (`JobConfig`, …) — narrowed where the UI relies on more than the schema says (a job list item
 * is either readable or broken). A changed answer is a type error here, not a broken page.
 */
import type { ExecutorStateName, JobBatchAnswer, JobListAnswer, JobListItemAnswer, MeAnswer, NamespaceSummaryAnswer, StatsAnswer, StatsJobState } from '@orrery/console/api-types';
import type { JobConfig, NamespaceInfo, RunStatus } from '@orrery/core/schemas';

export type { JobConfig, NamespaceInfo, RunStatus };

/** A role in one namespace, weakest first. */
export const NAMESPACE_ROLES = ['viewer', 'operator', 'owner'] as const satisfies ReadonlyArray<MeAnswer['roles'][string]>;
export type NamespaceRole = (typeof NAMESPACE_ROLES)[number];

/** `GET /auth/me`: who is signed in. */
export type Principal = MeAnswer;

/** One namespace of `GET /namespaces`. */
export type NamespaceSummary = NamespaceSummaryAnswer;

/** States the job list filters by (the API's `state` query). */
export const JOB_STATE_FILTERS = ['enabled', 'disabled', 'running', 'failing', 'broken'] as const;
export type JobStateFilter = (typeof JOB_STATE_FILTERS)[number];

type Listed = JobListItemAnswer;

/** An item's last outcome in the job list (the answer's status narrowed to core's run statuses). */
export type ListedOutcome = Omit<NonNullable<Listed['lastOutcomes']>[number], 'status'> & { status: RunStatus };

/**
 * One job of the list: the answer's item, told apart by `broken` (the API sends the config's fields
 * only for a readable config, and `problem` only for a broken one).
 */
export type JobListItem =
  | (Required<Omit<Listed, 'broken' | 'problem' | 'type' | 'lastOutcomes'>> & { broken: false; type: JobConfig['type']; lastOutcomes: ListedOutcome[] })
  | (Pick<Listed, 'name' | 'version'> & { broken: true; problem: string });

/** A page of `GET …/jobs`. */
export type JobListPage = Omit<JobListAnswer, 'items'> & { items: JobListItem[] };

/** Actions of `POST …/jobs/batch`. */
export type BatchAction = 'enable' | 'disable' | 'run' | 'delete';

/** The answer of `POST …/jobs/batch`. */
export type BatchResult = JobBatchAnswer;

/** Job states of the dashboard, one per job (the server's order). */
export const DASHBOARD_JOB_STATES = ['healthy', 'running', 'failing', 'unassigned', 'disabled', 'broken'] as const satisfies readonly StatsJobState[];
export const EXECUTOR_STATES = ['online', 'drained', 'offline'] as const satisfies readonly ExecutorStateName[];
// Each list names every state the server has (a state added there is a type error here).
type Missing<All, Listed> = Exclude<All, Listed> extends never ? true : ['missing', Exclude<All, Listed>];
const everyState: [Missing<StatsJobState, (typeof DASHBOARD_JOB_STATES)[number]>, Missing<ExecutorStateName, (typeof EXECUTOR_STATES)[number]>] = [true, true];
void everyState;

/** `GET …/stats`. */
export type NamespaceStats = StatsAnswer;

/** An event of `GET …/events` (the `data` of each server-sent event). */
export interface NamespaceEvent {
  kind: 'job' | 'assignment' | 'shard' | 'executor' | 'namespace' | 'ready' | 'closed';
  namespace?: string;
  job?: string;
  item?: number;
  executor?: string;
  deleted?: boolean;
}
