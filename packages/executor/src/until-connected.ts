import type { ZkClient } from '@orrery/core';

/** How long (ms) one wait for the connection lasts before it is asked again. */
export const CONNECT_WAIT_MS = 60_000;

/**
 * Resolves once `zk` is connected again, or closed, or `isClosed()` turns true (checked every
 * {@link CONNECT_WAIT_MS}). Never rejects.
 */
export async function untilConnected(zk: ZkClient, isClosed: () => boolean): Promise<void> {
  while (!isClosed() && zk.phase !== 'connected' && zk.phase !== 'closed') await zk.whenConnected(CONNECT_WAIT_MS).catch(() => undefined);
}
