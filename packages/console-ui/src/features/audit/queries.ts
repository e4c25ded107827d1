/**
 * The audit log: `GET /audit` newest first, page after page (`before` is the previous page's
 * `next`), filtered by namespace, job and user on the server; and the time window, which the API
 * has no parameter for, applied here.
 */
import { infiniteQueryOptions } from '@tanstack/react-query';
import type { AuditEntryAnswer, AuditListAnswer } from '@orrery/console/api-types';
import { api } from '../../api/client';

/** Entries per request. */
export const AUDIT_PAGE_SIZE = 100;

/** The filters the API takes (and the URL keeps). */
export interface AuditFilters {
  namespace?: string;
  job?: string;
  user?: string;
}

export const auditKeys = {
  all: ['audit'] as const,
  list: (filters: AuditFilters) => [...auditKeys.all, 'list', { namespace: filters.namespace ?? '', job: filters.job ?? '', user: filters.user ?? '' }] as const,
};

/** A page of `GET /audit`. */
export type AuditPage = AuditListAnswer;

export const auditQuery = (filters: AuditFilters) =>
  infiniteQueryOptions({
    queryKey: auditKeys.list(filters),
    queryFn: ({ pageParam, signal }) =>
      api<AuditPage>('/audit', { signal, query: { namespace: filters.namespace, job: filters.job, user: filters.user, limit: AUDIT_PAGE_SIZE, before: pageParam } }),
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (last) => last.next ?? undefined,
  });

/** The time windows of the "since" control, in ms (`all`: no bound). */
export const SINCE_WINDOWS = { all: 0, '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
export type Since = keyof typeof SINCE_WINDOWS;

/** The earliest instant `since` lets through, from `now` (undefined: no bound) (pure). */
export function sinceCutoff(since: Since, now: number): number | undefined {
  return since === 'all' ? undefined : now - SINCE_WINDOWS[since];
}

/** One top-level field of an entry's before and after. */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
  changed: boolean;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Deep equality of JSON values (key order ignored). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return false;
}

/**
 * The top-level fields of `before` and `after`, each marked changed or not — in `after`'s order,
 * then the fields only `before` has (pure). Undefined when either is there and not an object (the
 * two are then shown whole).
 */
export function fieldChanges(before: unknown, after: unknown): FieldChange[] | undefined {
  if ((before !== undefined && !isRecord(before)) || (after !== undefined && !isRecord(after))) return undefined;
  const b = before ?? {};
  const a = after ?? {};
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return fields.map((field) => ({ field, before: b[field], after: a[field], changed: !sameJson(b[field], a[field]) }));
}
