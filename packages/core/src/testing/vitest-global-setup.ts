/**
 * Vitest global setup: one real standalone ZooKeeper for the whole run, on a free loopback port
 * with its own data dir. Test files reach it with `inject('zkConnect')` and isolate themselves with
 * a unique root (chroot). Tests that restart or kill ZooKeeper start their own.
 */
import type { TestProject } from 'vitest/node';
import { startZooKeeper, type ZooKeeperServer } from './zk-server.js';

let server: ZooKeeperServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  server = await startZooKeeper();
  project.provide('zkConnect', server.connectString);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    zkConnect: string;
  }
}
