/**
 * The API's answers the UI reads. Configs come from core's schemas (`JobConfig`, …); these are the
 * console's own response shapes, as `docs/console.md` and `/api/v1/openapi.json` describe them.
 */
import type { JobConfig, NamespaceInfo, RunStatus } from '@orrery/core/schemas';

export type { JobConfig, NamespaceInfo, RunStatus };

/** A role in one namespace, weakest first. */
export const NAMESPACE_ROLES = ['viewer', 'operator', 'owner'] as const;
export type NamespaceRole = (typeof NAMESPACE_ROLES)[number];

/** `GET /auth/me`: who is signed in. */
export interface Principal {
  user: string;
  admin: boolean;
  roles: Readonly<Record<string, NamespaceRole>>;
  via: 'session' | 'token';
}

/** One namespace of `GET /namespaces`. */
export interface NamespaceSummary {
  name: string;
  version: number;
  settings: NamespaceInfo | null;
  problem?: string;
  jobs: number;
  enabledJobs: number;
  failingJobs: number;
  executors: { online: number; total: number };
}

/** States the job list filters by. */
export const JOB_STATE_FILTERS = ['enabled', 'disabled', 'running', 'failing', 'broken'] as const;
export type JobStateFilter = (typeof JOB_STATE_FILTERS)[number];

/** An item's last outcome in the job list. */
export interface ListedOutcome {
  item: number;
  status: RunStatus;
  endedAt: number;
  durationMs: number;
  executor: string;
  message: string;
}

/** One job of the list. */
export type JobListItem =
  | {
      name: string;
      broken: false;
      version: number;
      type: JobConfig['type'];
      description: string;
      cron: string | null;
      timeZone: string;
      nextFireTime: number | null;
      enabled: boolean;
      groups: string[];
      shardCount: number;
      localMode: boolean;
      summary: { running: number; failing: number; succeeded: number; unreadable: number };
      lastOutcomes: ListedOutcome[];
    }
  | { name: string; broken: true; version: number; problem: string };

/** A page of `GET …/jobs`. */
export interface JobListPage {
  total: number;
  limit: number;
  offset: number;
  cursor: string | null;
  nextCursor: string | null;
  filter: { name: string | null; group: string | null; state: JobStateFilter | null };
  items: JobListItem[];
}

/** Actions of `POST …/jobs:batch`. */
export type BatchAction = 'enable' | 'disable' | 'run' | 'delete';

/** The answer of `POST …/jobs:batch`. */
export interface BatchResult {
  action: BatchAction;
  results: Array<{ name: string; outcome: 'done' | 'unchanged' | 'failed'; error?: { code: string; message: string } }>;
}

/** Job states of the dashboard, one per job. */
export const DASHBOARD_JOB_STATES = ['healthy', 'running', 'failing', 'unassigned', 'disabled', 'broken'] as const;
export const EXECUTOR_STATES = ['online', 'drained', 'offline'] as const;

/** `GET …/stats`. */
export interface NamespaceStats {
  at: number;
  windowMs: number;
  jobs: { total: number; byState: Record<string, number> };
  executors: { total: number; byState: Record<string, number> };
  runs: Array<{ job: string; runs: number; failures: number; running: number }>;
  mostFailing: Array<{ job: string; runs: number; failures: number; lastFailureAt: number | null }>;
  coverage: string;
}

/** An event of `GET …/events` (the `data` of each server-sent event). */
export interface NamespaceEvent {
  kind: 'job' | 'assignment' | 'shard' | 'executor' | 'namespace' | 'ready' | 'closed';
  namespace?: string;
  job?: string;
  item?: number;
  executor?: string;
  deleted?: boolean;
}
