/**
 * Executors: query keys (under `[...nsKeys.namespace(ns), 'executors']`, which the live event
 * stream invalidates on executor and assignment events), the list, the drain preview
 * (`POST …/assignment/preview`), drain, undrain and remove.
 */
import { queryOptions } from '@tanstack/react-query';
import type { AssignmentPreviewAnswer, AssignmentPreviewBody, DrainAnswer, ExecutorSummaryAnswer } from '@orrery/console/api-types';
import { api, seg } from '../../api/client';
import { nsKeys } from '../namespaces/queries';

export const executorKeys = {
  all: (namespace: string) => [...nsKeys.namespace(namespace), 'executors'] as const,
  list: (namespace: string) => [...executorKeys.all(namespace), 'list'] as const,
};

/** Every executor the namespace knows, in the server's order (by name). */
export const executorsQuery = (namespace: string) =>
  queryOptions({
    queryKey: executorKeys.list(namespace),
    queryFn: ({ signal }) => api<{ executors: ExecutorSummaryAnswer[] }>(`/namespaces/${seg(namespace)}/executors`, { signal }),
    select: (answer) => answer.executors,
  });

/** What the allocator would do after a hypothetical change (nothing is written). */
export const previewAssignment = (namespace: string, change: AssignmentPreviewBody) =>
  api<AssignmentPreviewAnswer>(`/namespaces/${seg(namespace)}/assignment/preview`, { method: 'POST', body: change });


/** Drains (no shards: the allocator moves its own away) or undrains an executor. */
export const setDrained = (namespace: string, executor: string, drain: boolean) =>
  api<DrainAnswer>(`/namespaces/${seg(namespace)}/executors/${seg(executor)}/${drain ? 'drain' : 'undrain'}`, { method: 'POST', body: {} });

/** Removes an offline executor (409 while it is online). */
export const removeExecutor = (namespace: string, executor: string) => api<void>(`/namespaces/${seg(namespace)}/executors/${seg(executor)}`, { method: 'DELETE' });

type Move = AssignmentPreviewAnswer['moves'][number];

/** Moves of one job between the same two executors (and for the same reason), items together. */
export interface MoveGroup {
  job: string;
  from: string | null;
  to: string | null;
  why?: string;
  items: number[];
}

/** The preview's moves grouped by job, source, destination and reason; by job, then source, then destination (pure). */
export function groupMoves(moves: readonly Move[]): MoveGroup[] {
  const groups = new Map<string, MoveGroup>();
  for (const m of moves) {
    const key = JSON.stringify([m.job, m.from, m.to, m.why ?? null]);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { job: m.job, from: m.from, to: m.to, ...(m.why !== undefined ? { why: m.why } : {}), items: [] }));
    group.items.push(m.item);
  }
  const text = (s: string | null) => s ?? '\uffff';
  return [...groups.values()]
    .map((g) => ({ ...g, items: g.items.sort((a, b) => a - b) }))
    .sort((a, b) => a.job.localeCompare(b.job) || text(a.from).localeCompare(text(b.from)) || text(a.to).localeCompare(text(b.to)));
}

/** Items as short text: `0, 1, 2, 5` — the first `max`, then `+N` (pure). */
export function itemsText(items: readonly number[], max = 12): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown} +${items.length - max}` : shown;
}
