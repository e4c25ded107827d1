/**
 * The assignment: its query (under `[...nsKeys.namespace(ns), 'assignment']`, which the live event
 * stream invalidates on job, executor and assignment events) and the matrix built from it.
 */
import { queryOptions } from '@tanstack/react-query';
import type { AssignmentAnswer } from '@orrery/console/api-types';
import { api, seg } from '../../api/client';
import { nsKeys } from '../namespaces/queries';

export const assignmentKeys = {
  all: (namespace: string) => [...nsKeys.namespace(namespace), 'assignment'] as const,
  map: (namespace: string) => [...assignmentKeys.all(namespace), 'map'] as const,
};

/** The allocator's last written map, with the load per executor. */
export const assignmentQuery = (namespace: string) =>
  queryOptions({
    queryKey: assignmentKeys.map(namespace),
    queryFn: ({ signal }) => api<AssignmentAnswer>(`/namespaces/${seg(namespace)}/assignment`, { signal }),
  });

export type AssignedJob = AssignmentAnswer['jobs'][number];

/** One executor's column: its load and shards (from the answer's loads, else counted from the items). */
export interface ExecutorColumn {
  name: string;
  load: number;
  shards: number;
  /** A member of the last round (online, not drained). */
  member: boolean;
}

/** Unassigned items of a job grouped by reason (the advice of the first of each). */
export interface UnassignedGroup {
  reason: string;
  advice: string;
  items: number[];
}

/** One row of the matrix. */
export interface MatrixRow {
  job: AssignedJob;
  /** Shards per executor column (same order as the columns). */
  counts: number[];
  assigned: number;
  unassigned: UnassignedGroup[];
  unassignedCount: number;
}

export interface Matrix {
  columns: ExecutorColumn[];
  rows: MatrixRow[];
  unassignedItems: number;
  jobsWithUnassigned: number;
}

/**
 * The executors × jobs matrix (pure): a column for every executor that is a member, has a load
 * entry or holds items — plus `extra` (e.g. online executors that hold nothing) — sorted by name.
 */
export function buildMatrix(answer: AssignmentAnswer, extra: readonly string[] = []): Matrix {
  const loads = new Map(answer.loads.map((l) => [l.executor, l]));
  const members = new Set(answer.members);
  const names = new Set([...answer.members, ...answer.loads.map((l) => l.executor), ...extra]);
  const counted = new Map<string, { load: number; shards: number }>();
  for (const job of answer.jobs) {
    for (const [executor, items] of Object.entries(job.items)) {
      names.add(executor);
      const c = counted.get(executor) ?? { load: 0, shards: 0 };
      c.shards += items.length;
      c.load += items.length * (job.loadLevel ?? 1);
      counted.set(executor, c);
    }
  }
  const columns = [...names]
    .sort((a, b) => a.localeCompare(b))
    .map((name) => {
      const l = loads.get(name) ?? counted.get(name);
      return { name, load: l?.load ?? 0, shards: l?.shards ?? 0, member: members.has(name) };
    });
  const index = new Map(columns.map((c, i) => [c.name, i]));
  let unassignedItems = 0;
  let jobsWithUnassigned = 0;
  const rows = answer.jobs.map((job) => {
    const counts = columns.map(() => 0);
    let assigned = 0;
    for (const [executor, items] of Object.entries(job.items)) {
      counts[index.get(executor)!] = items.length;
      assigned += items.length;
    }
    const byReason = new Map<string, UnassignedGroup>();
    for (const u of job.unassigned) {
      let group = byReason.get(u.reason);
      if (!group) byReason.set(u.reason, (group = { reason: u.reason, advice: u.advice, items: [] }));
      group.items.push(u.item);
    }
    unassignedItems += job.unassigned.length;
    if (job.unassigned.length > 0) jobsWithUnassigned += 1;
    return { job, counts, assigned, unassigned: [...byReason.values()], unassignedCount: job.unassigned.length };
  });
  return { columns, rows, unassignedItems, jobsWithUnassigned };
}
