/**
 * A ZooKeeper client that notes the path of every create it sends (for tests of how many writes a
 * recipe costs): the same client, every other member passed straight through.
 */
import type { ZkClient } from '../zk/client.js';

export function notingCreates(zk: ZkClient): { zk: ZkClient; created: string[] } {
  const created: string[] = [];
  const noting = new Proxy(zk, {
    get(target, key) {
      if (key !== 'create') return Reflect.get(target, key) as unknown;
      return (path: string, ...rest: unknown[]) => {
        created.push(path);
        return (target.create as (...args: unknown[]) => Promise<string>)(path, ...rest);
      };
    },
  });
  return { zk: noting, created };
}
