/** The dashboard's numbers: `GET …/stats`. */
import { queryOptions } from '@tanstack/react-query';
import { api, seg } from '../../api/client';
import type { NamespaceStats } from '../../api/types';
import { nsKeys } from '../namespaces/queries';

export const statsKeys = {
  stats: (namespace: string) => [...nsKeys.namespace(namespace), 'stats'] as const,
};

export const statsQuery = (namespace: string) =>
  queryOptions({
    queryKey: statsKeys.stats(namespace),
    queryFn: ({ signal }) => api<NamespaceStats>(`/namespaces/${seg(namespace)}/stats`, { signal }),
  });
