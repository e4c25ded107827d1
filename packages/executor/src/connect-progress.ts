/**
 * What the executor says while it connects to ZooKeeper at start: where it connects (info, once),
 * then a warning every {@link CONNECT_WARN_INTERVAL_MS} while it is still not connected, so an
 * executor pointed at the wrong address or a ZooKeeper that is down is never silent.
 *
 * Guarantees: the logged address never holds credentials (a `user:password@` before a host is
 * dropped, {@link zkConnectTarget}; the digest credentials are never part of it anyway); the
 * warnings stop when the returned function is called (connected, failed or closed).
 */
import type { Logger } from '@orrery/core';

/** How often (ms) the executor warns while it is still connecting to ZooKeeper. */
export const CONNECT_WARN_INTERVAL_MS = 5000;

/**
 * The connect string as it may be logged: every `userinfo@` in front of a host removed (a
 * connect string has none, but one typed by hand might). Pure.
 */
export function zkConnectTarget(connect: string): string {
  return connect.split(',').map((host) => host.replace(/^[^/]*@/, '')).join(',');
}

/** What {@link reportConnecting} needs. */
export interface ConnectProgressOptions {
  logger: Logger;
  connect: string;
  root: string;
  /** How long the connection may take before the start fails, in ms (logged, not enforced here). */
  timeoutMs: number;
  intervalMs?: number;
}

/** Logs `connecting to ZooKeeper` now and `still connecting to ZooKeeper` on an interval; returns the stop. */
export function reportConnecting(options: ConnectProgressOptions): () => void {
  const { logger, root, timeoutMs } = options;
  const zk = zkConnectTarget(options.connect);
  const t0 = Date.now();
  let warnings = 0;
  logger.info({ zk, root, timeoutSeconds: timeoutMs / 1000 }, 'connecting to ZooKeeper');
  const timer = setInterval(() => {
    warnings += 1;
    logger.warn({ zk, root, warnings, elapsedSeconds: Math.round((Date.now() - t0) / 1000), timeoutSeconds: timeoutMs / 1000 }, 'still connecting to ZooKeeper');
  }, options.intervalMs ?? CONNECT_WARN_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
