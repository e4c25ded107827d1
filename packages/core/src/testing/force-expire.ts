import { createZkClient, type ZkClient } from '../zk/client.js';
import type { TcpProxy } from './tcp-proxy.js';

/**
 * Expires `victim`'s session from the server side, the way a real partition does: the victim
 * (which must connect through `proxy`) is cut off, a second handle attaches to its session directly
 * at `directConnect` and closes it — which ends the session on the server — and then the link is
 * restored, so the victim learns on reconnect that its session expired.
 */
export async function forceExpireSession(victim: ZkClient, proxy: TcpProxy, directConnect: string): Promise<void> {
  const credentials = victim.sessionCredentials();
  proxy.blackhole();
  const intruder = createZkClient({
    connect: directConnect,
    root: victim.options.root,
    sessionTimeoutMs: victim.sessionTimeoutMs,
    session: credentials,
  });
  try {
    await intruder.start();
  } finally {
    await intruder.close();
  }
  proxy.reset();
  proxy.forward();
}
