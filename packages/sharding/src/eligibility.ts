/**
 * Which executors may run a job's shards, and why a shard has none (pure).
 */
import type { UnassignedReason } from '@orrery/core/schemas';

/** An online executor as the allocator sees it. */
export interface ClusterExecutor {
  name: string;
  /** Node job handlers it loaded. */
  handlers: readonly string[];
  tags: readonly string[];
  /** Drained: gets no shards. */
  noTraffic: boolean;
}

/** The job fields the allocator uses. */
export interface ClusterJob {
  name: string;
  enabled: boolean;
  type: 'shell' | 'node';
  handler?: string | undefined;
  shardingTotalCount: number;
  localMode: boolean;
  loadLevel: number;
  preferList: readonly string[];
  useDispreferList: boolean;
}

/** The candidates for a job's shards, or the reason there are none. */
export type Candidates = { executors: ClusterExecutor[] } | { executors: []; reason: UnassignedReason };

/** True when `executor` is named by `preferList` (by name, or `@tag`). */
export function isPreferred(executor: ClusterExecutor, preferList: readonly string[]): boolean {
  for (const entry of preferList) {
    if (entry.startsWith('@') ? executor.tags.includes(entry.slice(1)) : entry === executor.name) return true;
  }
  return false;
}

/** The executors that may hold the job's shards now (sorted by name), or why none may. */
export function candidatesFor(job: ClusterJob, executors: readonly ClusterExecutor[]): Candidates {
  if (executors.length === 0) return { executors: [], reason: 'no-eligible-executor' };
  const traffic = executors.filter((e) => !e.noTraffic);
  if (traffic.length === 0) return { executors: [], reason: 'all-drained' };
  const able = job.type === 'node' ? traffic.filter((e) => job.handler !== undefined && e.handlers.includes(job.handler)) : traffic;
  if (able.length === 0) return { executors: [], reason: 'no-executor-has-handler' };
  if (job.preferList.length === 0) return { executors: able };
  const preferred = able.filter((e) => isPreferred(e, job.preferList));
  if (preferred.length > 0) return { executors: preferred };
  if (job.useDispreferList) return { executors: able };
  return { executors: [], reason: 'no-preferred-executor-online' };
}
