/**
 * The job detail page's reads and writes. Every query key is under the job's detail key
 * (`jobKeys.detail`, itself under `jobKeys.all`), so the namespace event stream's `job` and `shard`
 * events refresh the shards, the runs and the run shown with no reload. A finished run's log is not
 * a query: it is read in byte ranges by the log viewer ({@link readLogRange}) and never changes.
 */
import { queryOptions } from '@tanstack/react-query';
import type { JobDetailAnswer, RunAnswer, RunsAnswer, ShardsAnswer } from '@orrery/console/api-types';
import { ApiError, api, apiUrl, errorFromAnswer, seg } from '../../api/client';
import { jobKeys } from '../jobs/queries';

/** Runs the timeline may show at most (the API's largest page), and the choices offered. */
export const RUN_LIMITS = [50, 100, 200, 500, 1000] as const;
export type RunLimit = (typeof RUN_LIMITS)[number];
export const DEFAULT_RUN_LIMIT: RunLimit = 100;

/** How often the runs list is read again while a run is in progress, in ms (its end comes as an event too). */
export const RUNNING_REFETCH_MS = 5000;

/** The two log streams of a run. */
export const LOG_STREAMS = ['stdout', 'stderr'] as const;
export type LogStream = (typeof LOG_STREAMS)[number];

/** Bytes of a finished run's log read at a time ("load more" reads the next ones). */
export const LOG_PAGE_BYTES = 256 * 1024;

const jobPath = (namespace: string, job: string) => `/namespaces/${seg(namespace)}/jobs/${seg(job)}`;
const runPath = (namespace: string, job: string, runId: string) => `${jobPath(namespace, job)}/runs/${seg(runId)}`;

export const jobDetailKeys = {
  job: (namespace: string, job: string) => jobKeys.detail(namespace, job),
  shards: (namespace: string, job: string) => [...jobKeys.detail(namespace, job), 'shards'] as const,
  allRuns: (namespace: string, job: string) => [...jobKeys.detail(namespace, job), 'runs'] as const,
  runs: (namespace: string, job: string, limit: number) => [...jobKeys.detail(namespace, job), 'runs', limit] as const,
  run: (namespace: string, job: string, runId: string, executor: string | undefined) => [...jobKeys.detail(namespace, job), 'run', runId, executor ?? ''] as const,
};

/** The job: config (null when broken, with `problem`), version, assignment, item summary, next fire. */
export const jobQuery = (namespace: string, job: string) =>
  queryOptions({
    queryKey: jobDetailKeys.job(namespace, job),
    queryFn: ({ signal }) => api<JobDetailAnswer>(jobPath(namespace, job), { signal }),
  });

/** Each item: owner, state, run in progress, last outcome, next fire, why it is unassigned. */
export const shardsQuery = (namespace: string, job: string) =>
  queryOptions({
    queryKey: jobDetailKeys.shards(namespace, job),
    queryFn: ({ signal }) => api<ShardsAnswer>(`${jobPath(namespace, job)}/shards`, { signal }),
  });

/** True when a run of the list is in progress. */
export const someRunning = (answer: RunsAnswer | undefined): boolean => answer?.runs.some((r) => r.status === 'running') ?? false;

/** The newest `limit` runs, merged from the executors (read again every few seconds while one runs). */
export const runsQuery = (namespace: string, job: string, limit: number) =>
  queryOptions({
    queryKey: jobDetailKeys.runs(namespace, job, limit),
    queryFn: ({ signal }) => api<RunsAnswer>(`${jobPath(namespace, job)}/runs`, { signal, query: { limit } }),
    refetchInterval: (query) => (someRunning(query.state.data) ? RUNNING_REFETCH_MS : false),
  });

/** One run (`executor`: where it ran, when known). */
export const runQuery = (namespace: string, job: string, runId: string, executor: string | undefined) =>
  queryOptions({
    queryKey: jobDetailKeys.run(namespace, job, runId, executor),
    queryFn: ({ signal }) => api<RunAnswer>(runPath(namespace, job, runId), { signal, query: { executor } }),
  });

/** An action on the job from its page. */
export type JobDetailAction = 'enable' | 'disable' | 'run' | 'stop';

/** Runs `action` on the job (enable, disable, run now, stop its runs in progress). */
export const jobDetailAction = (namespace: string, job: string, action: JobDetailAction) =>
  api<unknown>(`${jobPath(namespace, job)}/${action}`, { method: 'POST', body: {} });

/** The URL of a run's log (`…/log`), or of its live tail (`…/log/stream`). */
export const logUrl = (namespace: string, job: string, runId: string, options: { stream: LogStream; executor?: string | undefined; live?: boolean }) =>
  apiUrl(`${runPath(namespace, job, runId)}/log${options.live ? '/stream' : ''}`, { stream: options.stream, executor: options.executor });

/** One range of a log as read. */
export interface LogRange {
  bytes: Uint8Array;
  /** The first byte read. */
  from: number;
  /** The log's size when read (null: not said). */
  size: number | null;
}

/** The log's total size from a `Content-Range: bytes a-b/N` (or `bytes * /N`) header. */
export function sizeFromContentRange(header: string | null): number | null {
  const match = header ? /\/(\d+)\s*$/.exec(header) : null;
  return match ? Number(match[1]) : null;
}

/**
 * Reads `LOG_PAGE_BYTES` of a run's log from byte `from` (a `Range` request: 206). Past the end
 * (416) is an empty range; a 200 (the whole log, from an executor that ignores ranges) is read as it
 * comes. Fails with an {@link ApiError} (`not-found` when the log is gone).
 */
export async function readLogRange(url: string, from: number, signal?: AbortSignal): Promise<LogRange> {
  let response: Response;
  try {
    response = await fetch(url, { credentials: 'same-origin', headers: { accept: 'text/plain', range: `bytes=${from}-${from + LOG_PAGE_BYTES - 1}` }, ...(signal ? { signal } : {}) });
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === 'AbortError') throw cause;
    throw new ApiError(0, 'network', cause instanceof Error ? cause.message : String(cause));
  }
  const sizeHeader = response.headers.get('x-log-size');
  const size = sizeHeader !== null && /^\d+$/.test(sizeHeader) ? Number(sizeHeader) : sizeFromContentRange(response.headers.get('content-range'));
  if (response.status === 416) return { bytes: new Uint8Array(0), from, size: size ?? from };
  if (!response.ok) {
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    throw errorFromAnswer(response.status, body, response.statusText);
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  // A 200 is the whole log from byte 0, whatever was asked.
  return response.status === 206 ? { bytes, from, size } : { bytes, from: 0, size: size ?? bytes.length };
}
