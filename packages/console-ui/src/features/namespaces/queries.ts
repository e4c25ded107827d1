/** Namespaces: query keys (every namespace-scoped key starts with `nsKeys.namespace(ns)`), queries, create. */
import { queryOptions } from '@tanstack/react-query';
import { api, seg } from '../../api/client';
import type { NamespaceSummary } from '../../api/types';

export const nsKeys = {
  all: ['namespaces'] as const,
  list: () => [...nsKeys.all, 'list'] as const,
  /** The prefix of everything read from one namespace (jobs, executors, stats, …). */
  namespace: (namespace: string) => ['ns', namespace] as const,
  detail: (namespace: string) => [...nsKeys.namespace(namespace), 'summary'] as const,
};

/** The namespaces the user has a role in, with counts. */
export const namespacesQuery = () =>
  queryOptions({
    queryKey: nsKeys.list(),
    queryFn: ({ signal }) => api<{ namespaces: NamespaceSummary[] }>('/namespaces', { signal }),
    select: (answer) => answer.namespaces,
  });

/** One namespace's summary. */
export const namespaceQuery = (namespace: string) =>
  queryOptions({
    queryKey: nsKeys.detail(namespace),
    queryFn: ({ signal }) => api<NamespaceSummary>(`/namespaces/${seg(namespace)}`, { signal }),
  });

/** Creates a namespace (admin). */
export const createNamespace = (input: { name: string; description?: string }) =>
  api<NamespaceSummary>('/namespaces', { method: 'POST', body: input.description ? input : { name: input.name } });
