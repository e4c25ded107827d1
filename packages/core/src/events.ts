/**
 * A small typed event emitter. Handles use it for their `on(event, listener) → unsubscribe`
 * API; tests await events with {@link waitForEvent} instead of sleeping.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type EventMap = Record<string, any>;

/** A listener of event `K` of map `M`. */
export type Listener<M extends EventMap, K extends keyof M> = (payload: M[K]) => void;

/** The subscribe side of an emitter. */
export interface Subscribable<M extends EventMap> {
  /** Subscribes; returns the function that unsubscribes. */
  on<K extends keyof M>(event: K, listener: Listener<M, K>): () => void;
}

/** An emitter: subscribe with `on`, publish with `emit`. */
export interface Emitter<M extends EventMap> extends Subscribable<M> {
  emit<K extends keyof M>(event: K, payload: M[K]): void;
  /** Drops every listener. */
  clear(): void;
}

/**
 * Creates an emitter. A listener that throws does not stop the others; its error goes to
 * `onListenerError` (default: rethrown on a later tick so it is not lost).
 */
export function createEmitter<M extends EventMap>(
  onListenerError: (error: unknown) => void = (error) => queueMicrotask(() => { throw error; }),
): Emitter<M> {
  const listeners = new Map<keyof M, Set<(payload: unknown) => void>>();
  return {
    on(event, listener) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      const fn = listener as (payload: unknown) => void;
      set.add(fn);
      return () => { set.delete(fn); };
    },
    emit(event, payload) {
      const set = listeners.get(event);
      if (!set) return;
      for (const fn of [...set]) {
        try {
          fn(payload);
        } catch (error) {
          onListenerError(error);
        }
      }
    },
    clear() {
      listeners.clear();
    },
  };
}

/**
 * Resolves with the payload of the next `event` for which `predicate` holds; rejects after
 * `timeoutMs` (default 10 s) with an error that names the event.
 */
export function waitForEvent<M extends EventMap, K extends keyof M>(
  source: Subscribable<M>,
  event: K,
  options: { timeoutMs?: number; predicate?: (payload: M[K]) => boolean } = {},
): Promise<M[K]> {
  const { timeoutMs = 10_000, predicate = () => true } = options;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for event '${String(event)}'`));
    }, timeoutMs);
    const off = source.on(event, (payload) => {
      if (!predicate(payload)) return;
      clearTimeout(timer);
      off();
      resolve(payload);
    });
  });
}
