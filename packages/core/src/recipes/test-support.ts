// Shared set-up for the recipe tests (not exported from the package).
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createTcpProxy, type TcpProxy } from '../testing/tcp-proxy.js';
import { createZkClient, type ZkClient } from '../zk/client.js';

const cleanups: Array<() => Promise<void>> = [];

/** Registers a cleanup to run after the current test, newest first. */
export function onCleanup(fn: () => Promise<void>): void {
  cleanups.push(fn);
}

afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A started client under `root`, closed after the test. */
export async function client(connect: string, root: string, sessionTimeoutMs = 4000): Promise<ZkClient> {
  const zk = createZkClient({ connect, root, sessionTimeoutMs });
  onCleanup(() => zk.close());
  await zk.start();
  return zk;
}

/**
 * A fault-injecting proxy in front of the ZooKeeper at `connect`, for this test file: started before
 * its tests, closed after. Returns a getter (the proxy exists once `beforeAll` ran).
 */
export function proxyFor(connect: string): () => TcpProxy {
  let proxy: TcpProxy | undefined;
  beforeAll(async () => {
    proxy = await createTcpProxy({ targetPort: Number(connect.split(':')[1]) });
  });
  afterAll(async () => {
    await proxy?.close();
  });
  return () => proxy!;
}
