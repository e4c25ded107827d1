/**
 * The one QueryClient: data counts as fresh for {@link STALE_MS} (the live event stream invalidates
 * what changes sooner), client errors (4xx) are not retried, and a 401 from any query or mutation
 * calls `onUnauthorized` (the app sends the user to /login and back afterwards).
 */
import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { isApiError } from '../api/client';

/** How long an answer counts as fresh, in ms (events invalidate changed data at once). */
export const STALE_MS = 30_000;
/** Retries of a query that failed with a network error or a 5xx. */
export const QUERY_RETRIES = 2;

/** Options of {@link createQueryClient}. */
export interface QueryClientOptions {
  /** Called on any 401 (the session ended). */
  onUnauthorized?: () => void;
}

/** Creates the app's QueryClient. */
export function createQueryClient(options: QueryClientOptions = {}): QueryClient {
  const onError = (error: unknown) => {
    if (isApiError(error, 'no-auth')) options.onUnauthorized?.();
  };
  return new QueryClient({
    queryCache: new QueryCache({ onError }),
    mutationCache: new MutationCache({ onError }),
    defaultOptions: {
      queries: {
        staleTime: STALE_MS,
        retry: (failures, error) => !(isApiError(error) && error.status >= 400 && error.status < 500) && failures < QUERY_RETRIES,
        refetchOnWindowFocus: true,
      },
      mutations: { retry: false },
    },
  });
}
