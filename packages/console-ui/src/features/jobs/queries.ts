/**
 * Jobs: query keys, the paged list (cursor pages of {@link JOB_PAGE_SIZE}), one job, and the
 * actions — enable, disable, run, stop, copy, delete, one job or a batch.
 */
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import type { JobDetailAnswer, JobWriteAnswer } from '@orrery/console/api-types';
import { api, seg } from '../../api/client';
import type { BatchAction, BatchResult, JobListPage, JobStateFilter } from '../../api/types';
import { nsKeys } from '../namespaces/queries';

/** The most names one batch request carries (the API's limit); more are sent in several requests. */
export const BATCH_CHUNK = 1000;

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

/** One job: its config with the version to send back with a PUT, assignment and item states. */
export const jobDetailQuery = (namespace: string, job: string) =>
  queryOptions({
    queryKey: jobKeys.detail(namespace, job),
    queryFn: ({ signal }) => api<JobDetailAnswer>(`/namespaces/${seg(namespace)}/jobs/${seg(job)}`, { signal }),
  });

/** One job's action: enable, disable, run now, stop its runs in progress. */
export type JobAction = 'enable' | 'disable' | 'run' | 'stop';

/** Runs `action` on one job. */
export const jobAction = (namespace: string, job: string, action: JobAction) =>
  api<unknown>(`/namespaces/${seg(namespace)}/jobs/${seg(job)}/${action}`, { method: 'POST', body: {} });

/**
 * Runs `action` on several jobs at once (all checked first: nothing done when one fails a check).
 * `force` (delete only): enabled jobs are deleted too, each disabled first.
 */
export const batchJobs = (namespace: string, action: BatchAction, names: readonly string[], force?: boolean) =>
  api<BatchResult>(`/namespaces/${seg(namespace)}/jobs/batch`, { method: 'POST', body: force === undefined ? { action, names } : { action, names, force } });

/** Copies `job` under the name `name`, disabled. */
export const copyJob = (namespace: string, job: string, name: string) =>
  api<JobWriteAnswer>(`/namespaces/${seg(namespace)}/jobs/${seg(job)}/copy`, { method: 'POST', body: { name } });

/** Deletes `job` (refused while it is enabled unless `force`: then it is disabled first). */
export const deleteJob = (namespace: string, job: string, force: boolean) =>
  api<void>(`/namespaces/${seg(namespace)}/jobs/${seg(job)}`, { method: 'DELETE', query: { force: force || undefined } });
