/** Jobs: query keys, the paged list (cursor pages of {@link JOB_PAGE_SIZE}), and the actions. */
import { infiniteQueryOptions } from '@tanstack/react-query';
import { api, seg } from '../../api/client';
import type { BatchAction, BatchResult, JobListPage, JobStateFilter } from '../../api/types';
import { nsKeys } from '../namespaces/queries';

/** Jobs per list request (the API's largest page). */
export const JOB_PAGE_SIZE = 500;

/** The list's filters, as the API's list query takes them (and the jobs page's URL keeps them). */
export interface JobFilters {
  /** A substring of the name (case-insensitive). */
  q?: string;
  group?: string;
  state?: JobStateFilter;
}

export const jobKeys = {
  all: (namespace: string) => [...nsKeys.namespace(namespace), 'jobs'] as const,
  lists: (namespace: string) => [...jobKeys.all(namespace), 'list'] as const,
  list: (namespace: string, filters: JobFilters) => [...jobKeys.lists(namespace), { q: filters.q ?? '', group: filters.group ?? '', state: filters.state ?? '' }] as const,
  detail: (namespace: string, job: string) => [...jobKeys.all(namespace), 'detail', job] as const,
};

/** The job list, page after page (follow `nextCursor`). */
export const jobListQuery = (namespace: string, filters: JobFilters) =>
  infiniteQueryOptions({
    queryKey: jobKeys.list(namespace, filters),
    queryFn: ({ pageParam, signal }) =>
      api<JobListPage>(`/namespaces/${seg(namespace)}/jobs`, {
        signal,
        query: { name: filters.q, group: filters.group, state: filters.state, limit: JOB_PAGE_SIZE, cursor: pageParam },
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });

/** One job's action: enable, disable, run now. */
export type JobAction = 'enable' | 'disable' | 'run';

/** Runs `action` on one job. */
export const jobAction = (namespace: string, job: string, action: JobAction) =>
  api<unknown>(`/namespaces/${seg(namespace)}/jobs/${seg(job)}/${action}`, { method: 'POST', body: {} });

/** Runs `action` on several jobs at once (all checked first: nothing done when one fails a check). */
export const batchJobs = (namespace: string, action: BatchAction, names: readonly string[]) =>
  api<BatchResult>(`/namespaces/${seg(namespace)}/jobs/batch`, { method: 'POST', body: { action, names } });
