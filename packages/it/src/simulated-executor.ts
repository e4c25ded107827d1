/**
 * A stand-in executor for allocator tests: it only announces itself (ephemeral presence, as the real
 * executor does) through its own ZooKeeper session, optionally through a fault-injecting proxy.
 */
import { createZkClient, encodeJson, paths, type ZkClient } from '@orrery/core';

export interface SimulatedExecutor {
  readonly name: string;
  readonly zk: ZkClient;
  /** Removes the presence (a clean leave). */
  leave(): Promise<void>;
  close(): Promise<void>;
}

export async function startSimulatedExecutor(options: {
  connect: string;
  root: string;
  namespace: string;
  name: string;
  handlers?: string[];
  tags?: string[];
  sessionTimeoutMs?: number;
}): Promise<SimulatedExecutor> {
  const zk = createZkClient({ connect: options.connect, root: options.root, sessionTimeoutMs: options.sessionTimeoutMs ?? 4000 });
  await zk.start();
  await zk.mkdirp(paths.executor(options.namespace, options.name));
  await zk.create(
    paths.executorPresence(options.namespace, options.name),
    encodeJson({ host: 'sim', pid: 1, version: 'sim', startedAt: Date.now(), handlers: options.handlers ?? [], tags: options.tags ?? [] }),
    'ephemeral',
  );
  return {
    name: options.name,
    zk,
    async leave() {
      await zk.delete(paths.executorPresence(options.namespace, options.name)).catch(() => undefined);
    },
    close: () => zk.close(),
  };
}
