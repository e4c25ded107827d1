/**
 * Live updates: one `EventSource` per open namespace (`GET …/events`) whose events invalidate the
 * query keys they touch — batched, so a burst of events is one refetch per key prefix
 * ({@link FLUSH_MS}). An event says what changed, not its value: the queries read it again from
 * the console's cache. After a reconnection (`ready`) everything of the namespace is read again.
 */
import { useQueryClient, type QueryClient, type QueryKey } from '@tanstack/react-query';
import { useEffect } from 'react';
import { apiUrl, seg } from '../api/client';
import type { NamespaceEvent } from '../api/types';
import { sessionKeys } from '../auth/session';
import { nsKeys } from '../features/namespaces/queries';

/** How long invalidations wait to be batched, in ms. */
export const FLUSH_MS = 500;

/**
 * The key prefixes an event invalidates (pure). A job's or a shard's change touches the job lists
 * and that one job's page (its shards, runs, history), not every job's: a busy namespace sends
 * shard events all the time, and an open job page reads its runs from the executors.
 */
export function keysForEvent(namespace: string, event: NamespaceEvent): QueryKey[] {
  const ns = nsKeys.namespace(namespace);
  const jobs = (job: string | undefined): QueryKey[] => (job === undefined ? [[...ns, 'jobs']] : [[...ns, 'jobs', 'list'], [...ns, 'jobs', 'detail', job]]);
  switch (event.kind) {
    case 'ready':
      return [ns, nsKeys.list()];
    case 'job':
      return [...jobs(event.job), [...ns, 'stats'], [...ns, 'assignment'], nsKeys.list()];
    case 'shard':
      return [...jobs(event.job), [...ns, 'stats']];
    case 'assignment':
      return [[...ns, 'assignment'], [...ns, 'executors'], ...(event.job === undefined ? [[...ns, 'jobs', 'detail']] : [[...ns, 'jobs', 'detail', event.job]]), [...ns, 'stats']];
    case 'executor':
      return [[...ns, 'executors'], [...ns, 'assignment'], [...ns, 'stats'], nsKeys.list()];
    case 'namespace':
      return [ns, nsKeys.list()];
    case 'closed':
      return [sessionKeys.all];
  }
}

const EVENT_KINDS = ['ready', 'job', 'shard', 'assignment', 'executor', 'namespace', 'closed'] as const;

/** Opens the namespace's event stream and feeds the cache; returns the closer. */
export function connectNamespaceEvents(queryClient: QueryClient, namespace: string): () => void {
  const source = new EventSource(apiUrl(`/namespaces/${seg(namespace)}/events`), { withCredentials: true });
  const pending = new Map<string, QueryKey>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    timer = undefined;
    const keys = [...pending.values()];
    pending.clear();
    for (const queryKey of keys) void queryClient.invalidateQueries({ queryKey });
  };
  const onEvent = (message: MessageEvent<string>) => {
    let event: NamespaceEvent;
    try {
      event = { kind: message.type as NamespaceEvent['kind'], ...(message.data ? (JSON.parse(message.data) as object) : {}) };
    } catch {
      return;
    }
    if (event.kind === 'closed') source.close();
    for (const key of keysForEvent(namespace, event)) pending.set(JSON.stringify(key), key);
    timer ??= setTimeout(flush, FLUSH_MS);
  };
  for (const kind of EVENT_KINDS) source.addEventListener(kind, onEvent);
  source.onerror = () => {
    // The browser reconnects by itself unless the answer was not an event stream (401, 403, 429):
    // then ask who is signed in — a 401 there sends the user to the login page.
    if (source.readyState === EventSource.CLOSED) void queryClient.invalidateQueries({ queryKey: sessionKeys.all });
  };
  return () => {
    source.close();
    if (timer) clearTimeout(timer);
  };
}

/** Keeps the namespace's event stream open while the component is mounted. */
export function useNamespaceEvents(namespace: string): void {
  const queryClient = useQueryClient();
  useEffect(() => {
    if (typeof EventSource === 'undefined') return undefined;
    return connectNamespaceEvents(queryClient, namespace);
  }, [queryClient, namespace]);
}
