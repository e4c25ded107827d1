/** A job's config history: the versions, a diff of two, and the rollback. */
import { queryOptions } from '@tanstack/react-query';
import type { JobDiffAnswer, JobHistoryAnswer, JobWriteAnswer } from '@orrery/console/api-types';
import { api, seg } from '../../api/client';
import { jobKeys } from '../jobs/queries';

/** Under the job's key: a write to the job (an invalidation of its prefix) reads the history again. */
export const historyKeys = {
  history: (namespace: string, job: string) => [...jobKeys.detail(namespace, job), 'history'] as const,
  diff: (namespace: string, job: string, from: number, to: number) => [...historyKeys.history(namespace, job), 'diff', from, to] as const,
};

const jobPath = (namespace: string, job: string) => `/namespaces/${seg(namespace)}/jobs/${seg(job)}`;

/** `GET …/history`: the kept versions, newest first, and the current version. */
export const historyQuery = (namespace: string, job: string) =>
  queryOptions({
    queryKey: historyKeys.history(namespace, job),
    queryFn: ({ signal }) => api<JobHistoryAnswer>(`${jobPath(namespace, job)}/history`, { signal }),
  });

/** `GET …/diff?from=&to=`: field by field, what changed from `from` to `to`. */
export const diffQuery = (namespace: string, job: string, from: number, to: number) =>
  queryOptions({
    queryKey: historyKeys.diff(namespace, job, from, to),
    queryFn: ({ signal }) => api<JobDiffAnswer>(`${jobPath(namespace, job)}/diff`, { signal, query: { from, to } }),
    // Two kept versions never change: their diff holds until the history is read again.
    staleTime: Number.POSITIVE_INFINITY,
  });

/** The answer of a rollback. */
export type RollbackAnswer = JobWriteAnswer & { rolledBackTo: number };

/** `POST …/rollback`: version `version`'s config put back by a compare-and-set from `currentVersion`. */
export const rollbackJob = (namespace: string, job: string, version: number, currentVersion: number) =>
  api<RollbackAnswer>(`${jobPath(namespace, job)}/rollback`, { method: 'POST', body: { version, currentVersion } });
