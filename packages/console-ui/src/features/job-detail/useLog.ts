/**
 * A run's log, two ways:
 * - {@link useStoredLog}: a finished run's log read in {@link LOG_PAGE_BYTES} ranges (the first at
 *   once, the next on "load more"), decoded as UTF-8 across range boundaries;
 * - {@link useLogStream}: a running run's log followed live over an `EventSource` on `…/log/stream`
 *   — `log` events appended, then exactly one ending: `end` (with the run's record), `expired`,
 *   `executor-offline`, or `closed` (access revoked); the source is closed on any of them (else it
 *   would reconnect and replay the ending) and when the component unmounts.
 */
import type { RunAnswer } from '@orrery/console/api-types';
import { useCallback, useEffect, useRef, useState } from 'react';
import { LOG_PAGE_BYTES, readLogRange } from './queries';

/** The most characters a followed log keeps in the page (older ones are dropped, and counted). */
export const MAX_LIVE_CHARS = 2_000_000;

/** A finished run's log as read so far. */
export interface StoredLog {
  text: string;
  /** The next byte to read. */
  next: number;
  /** The log's size (null: not known yet). */
  size: number | null;
  /** Everything is read. */
  done: boolean;
  loading: boolean;
  error: unknown;
  /** Reads the next range. */
  loadMore: () => void;
}

export function useStoredLog(url: string): StoredLog {
  const [state, setState] = useState<Omit<StoredLog, 'loadMore'>>({ text: '', next: 0, size: null, done: false, loading: true, error: undefined });
  const decoder = useRef(new TextDecoder());
  const controller = useRef<AbortController | undefined>(undefined);
  const load = useCallback(
    (from: number) => {
      controller.current?.abort();
      const abort = new AbortController();
      controller.current = abort;
      if (from === 0) decoder.current = new TextDecoder();
      setState((s) => ({ ...s, loading: true, error: undefined }));
      readLogRange(url, from, abort.signal).then(
        (range) => {
          if (abort.signal.aborted) return;
          const next = range.from + range.bytes.length;
          const done = range.size !== null ? next >= range.size : range.bytes.length < LOG_PAGE_BYTES;
          // A whole log from byte 0 (an executor that ignored the range) replaces what was read.
          if (range.from === 0) decoder.current = new TextDecoder();
          let chunk = decoder.current.decode(range.bytes, { stream: !done });
          if (done) chunk += decoder.current.decode();
          setState((s) => ({ text: range.from === 0 ? chunk : s.text + chunk, next, size: range.size, done, loading: false, error: undefined }));
        },
        (error: unknown) => {
          if (abort.signal.aborted) return;
          setState((s) => ({ ...s, loading: false, error }));
        },
      );
    },
    [url],
  );
  useEffect(() => {
    load(0);
    return () => controller.current?.abort();
  }, [load]);
  const { next } = state;
  const loadMore = useCallback(() => load(next), [load, next]);
  return { ...state, loadMore };
}

/** How a followed log ended. */
export type LogEnding =
  | { kind: 'end'; run: RunAnswer | undefined }
  | { kind: 'expired'; message: string }
  | { kind: 'executor-offline'; executor: string; message: string }
  | { kind: 'closed'; message: string }
  | { kind: 'error'; message: string }
  /** The connection failed and the browser gave up reconnecting. */
  | { kind: 'lost' }
  /** No `EventSource` in this browser. */
  | { kind: 'unsupported' };

/** A followed log as received so far. */
export interface LogStreamState {
  text: string;
  /** Characters dropped from the start to stay under {@link MAX_LIVE_CHARS}. */
  dropped: number;
  ending: LogEnding | undefined;
  /** The connection dropped and the browser is reconnecting (it resumes where it was). */
  reconnecting: boolean;
}

function parse(event: Event): Record<string, unknown> | undefined {
  if (!(event instanceof MessageEvent) || typeof event.data !== 'string' || event.data === '') return undefined;
  try {
    const value: unknown = JSON.parse(event.data);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Follows `url` (a `…/log/stream` URL) while mounted. */
export function useLogStream(url: string): LogStreamState {
  const [state, setState] = useState<LogStreamState>({ text: '', dropped: 0, ending: undefined, reconnecting: false });
  useEffect(() => {
    setState({ text: '', dropped: 0, ending: undefined, reconnecting: false });
    if (typeof EventSource === 'undefined') {
      setState((s) => ({ ...s, ending: { kind: 'unsupported' } }));
      return undefined;
    }
    const source = new EventSource(url, { withCredentials: true });
    // The next byte expected: a chunk already received (a replay after reconnecting) is skipped.
    let received = 0;
    let ended = false;
    const finish = (ending: LogEnding) => {
      if (ended) return;
      ended = true;
      source.close();
      setState((s) => ({ ...s, ending, reconnecting: false }));
    };
    source.addEventListener('open', () => setState((s) => (s.reconnecting ? { ...s, reconnecting: false } : s)));
    source.addEventListener('log', (event) => {
      const data = parse(event);
      if (!data || typeof data.text !== 'string' || ended) return;
      if (typeof data.next === 'number') {
        if (data.next <= received) return;
        received = data.next;
      }
      const chunk = data.text;
      setState((s) => {
        const joined = s.text + chunk;
        const over = joined.length - MAX_LIVE_CHARS;
        return over > 0 ? { ...s, text: joined.slice(over), dropped: s.dropped + over, reconnecting: false } : { ...s, text: joined, reconnecting: false };
      });
    });
    source.addEventListener('end', (event) => {
      const run = parse(event)?.run;
      finish({ kind: 'end', run: typeof run === 'object' && run !== null ? (run as RunAnswer) : undefined });
    });
    source.addEventListener('expired', (event) => finish({ kind: 'expired', message: text(parse(event)?.message) }));
    source.addEventListener('executor-offline', (event) => {
      const data = parse(event);
      finish({ kind: 'executor-offline', executor: text(data?.executor), message: text(data?.message) });
    });
    source.addEventListener('closed', (event) => finish({ kind: 'closed', message: text(parse(event)?.message) }));
    source.addEventListener('error', (event) => {
      // The server's own `error` event carries data; the browser's (a dropped connection) does not.
      const data = parse(event);
      if (data) finish({ kind: 'error', message: text(data.message) });
      else if (source.readyState === EventSource.CLOSED) finish({ kind: 'lost' });
      else setState((s) => ({ ...s, reconnecting: true }));
    });
    return () => {
      ended = true;
      source.close();
    };
  }, [url]);
  return state;
}
