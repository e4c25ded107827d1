import { describe, expect, inject, it } from 'vitest';
import { createTreeCache, type TreeCache } from './tree-cache.js';
import { createZkClient, type ZkClient } from '../zk/client.js';
import { createTcpProxy, eventually, forceExpireSession, startZooKeeper, uniqueRoot } from '../testing/index.js';
import { client, onCleanup, proxyFor } from './test-support.js';

const zkConnect = inject('zkConnect');
const proxy = proxyFor(zkConnect);

/** The server's state under `path`: path → data. */
async function snapshot(zk: ZkClient, path: string, out = new Map<string, string>()): Promise<Map<string, string>> {
  try {
    const { data } = await zk.get(path);
    out.set(path, data?.toString() ?? '');
    for (const child of await zk.getChildren(path)) await snapshot(zk, path === '/' ? `/${child}` : `${path}/${child}`, out);
  } catch (error) {
    if ((error as { code?: string }).code !== 'no-node') throw error;
  }
  return out;
}

function mirror(cache: TreeCache): Map<string, string> {
  return new Map(cache.paths().map((p) => [p, cache.get(p)!.data?.toString() ?? '']));
}

function cache(zk: ZkClient, root: string, maxDepth?: number): TreeCache {
  const c = createTreeCache(zk, root, maxDepth === undefined ? {} : { maxDepth });
  onCleanup(() => c.close());
  return c;
}

describe('tree cache', () => {
  it('loads a subtree, then reports adds, updates and removes', async () => {
    const root = uniqueRoot('tree');
    const writer = await client(zkConnect, root);
    await writer.mkdirp('/t/a/b');
    await writer.set('/t/a', 'A');
    const c = cache(await client(zkConnect, root), '/t');
    await c.start();
    expect(c.initialized).toBe(true);
    expect(c.paths()).toEqual(['/t', '/t/a', '/t/a/b']);
    const events: string[] = [];
    c.on('node:added', (n) => events.push(`added ${n.path}`));
    c.on('node:updated', (n) => events.push(`updated ${n.path} ${n.data?.toString()}`));
    c.on('node:removed', (n) => events.push(`removed ${n.path}`));
    await writer.create('/t/c', 'C');
    await writer.set('/t/a/b', 'B');
    await writer.deleteRecursive('/t/a');
    // Order is guaranteed per node, not across nodes; a subtree goes children first.
    await eventually(() => expect([...events].sort()).toEqual(['added /t/c', 'removed /t/a', 'removed /t/a/b', 'updated /t/a/b B']));
    expect(events.indexOf('removed /t/a/b')).toBeLessThan(events.indexOf('removed /t/a'));
    expect(events.indexOf('updated /t/a/b B')).toBeLessThan(events.indexOf('removed /t/a/b'));
    expect(c.children('/t')).toEqual(['c']);
  });

  it('sees the root appear and disappear', async () => {
    const root = uniqueRoot('tree-root');
    const writer = await client(zkConnect, root);
    const c = cache(await client(zkConnect, root), '/later');
    await c.start();
    expect(c.paths()).toEqual([]);
    await writer.mkdirp('/later/x');
    await eventually(() => expect(c.paths()).toEqual(['/later', '/later/x']));
    await writer.deleteRecursive('/later');
    await eventually(() => expect(c.paths()).toEqual([]));
    await writer.create('/later', 'again');
    await eventually(() => expect(c.get('/later')?.data?.toString()).toBe('again'));
  });

  it('converges to the server state under concurrent writers', async () => {
    const root = uniqueRoot('tree-converge');
    const writers = [await client(zkConnect, root), await client(zkConnect, root), await client(zkConnect, root)];
    await writers[0]!.mkdirp('/t');
    const c = cache(await client(zkConnect, root), '/t');
    await c.start();
    // Three writers race: create, update, delete and re-create nodes two levels deep.
    let seed = 42;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    await Promise.all(writers.map(async (w, wi) => {
      for (let i = 0; i < 150; i += 1) {
        const path = `/t/n${random(6)}${random(2) ? `/m${random(3)}` : ''}`;
        try {
          switch (random(3)) {
            case 0: await w.mkdirp(path); await w.set(path, `w${wi}-${i}`); break;
            case 1: await w.set(path, `w${wi}-${i}`); break;
            default: await w.deleteRecursive(path);
          }
        } catch (error) {
          if (!['no-node', 'node-exists', 'not-empty'].includes((error as { code: string }).code)) throw error;
        }
      }
    }));
    const server = await snapshot(writers[0]!, '/t');
    await eventually(async () => {
      await c.settled();
      expect(mirror(c)).toEqual(server);
    });
  });

  it('rebuilds itself after a new session, reporting what changed meanwhile', async () => {
    const root = uniqueRoot('tree-session');
    const writer = await client(zkConnect, root);
    await writer.mkdirp('/t/keep');
    await writer.mkdirp('/t/gone');
    const zk = await client(proxy().connectString, root, 3000);
    const c = cache(zk, '/t');
    await c.start();
    const removed: string[] = [];
    c.on('node:removed', (n) => removed.push(n.path));
    proxy().blackhole();
    // Changes while the cache is cut off.
    await writer.deleteRecursive('/t/gone');
    await writer.create('/t/new', 'N');
    await writer.set('/t/keep', 'K');
    const session = new Promise((resolve) => zk.on('session', resolve));
    await forceExpireSession(zk, proxy(), zkConnect);
    await session;
    await eventually(async () => {
      await c.settled();
      expect(mirror(c)).toEqual(await snapshot(writer, '/t'));
    });
    expect(removed).toEqual(['/t/gone']);
    // And it keeps following changes in the new session.
    await writer.set('/t/new', 'N2');
    await eventually(() => expect(c.get('/t/new')?.data?.toString()).toBe('N2'));
  });

  it('after a reconnect in the same session, reads again only what changed: not every leaf', async () => {
    const root = uniqueRoot('tree-reconnect');
    const writer = await client(zkConnect, root);
    const leaves = Array.from({ length: 30 }, (_, i) => `/t/dir/${i}`);
    for (const path of leaves) await writer.mkdirp(path);
    const zk = await client(proxy().connectString, root, 10_000);
    const reads: string[] = [];
    const counting: ZkClient = Object.create(zk) as ZkClient;
    counting.get = (path, watcher) => {
      reads.push(path);
      return zk.get(path, watcher);
    };
    // Leaves' children are not listed (as the console does for shard nodes).
    const c = createTreeCache(counting, '/t', { descend: (p) => !p.startsWith('/t/dir/') });
    onCleanup(() => c.close());
    await c.start();
    const suspended = new Promise((resolve) => zk.on('state', (s) => { if (s.state === 'SUSPENDED') resolve(s); }));
    const reconnected = new Promise<{ newSession: boolean }>((resolve) => zk.on('state', (s) => { if (s.state === 'RECONNECTED') resolve(s); }));
    proxy().reset();
    await suspended;
    await writer.set('/t/dir/7', 'changed');
    expect((await reconnected).newSession).toBe(false);
    reads.length = 0;
    await eventually(async () => {
      await c.settled();
      expect(c.get('/t/dir/7')?.data?.toString()).toBe('changed');
    });
    // The root's read, the changed leaf's, and no other leaf's.
    expect(reads.filter((p) => p.startsWith('/t/dir/') && p !== '/t/dir/7')).toEqual([]);
    expect(mirror(c)).toEqual(await snapshot(writer, '/t'));
  });

  it('reads and watches nodes through the client its route names; a session lost by one client re-reads only that client\'s nodes', async () => {
    const root = uniqueRoot('tree-route');
    const writer = await client(zkConnect, root);
    for (const dir of ['a', 'b']) for (let i = 0; i < 5; i += 1) await writer.mkdirp(`/t/${dir}/${i}`);
    const own = await client(zkConnect, root);
    const other = await client(proxy().connectString, root, 3000);
    const reads = new Map<ZkClient, string[]>([[own, []], [other, []]]);
    const counting = (zk: ZkClient): ZkClient => {
      const wrapped: ZkClient = Object.create(zk) as ZkClient;
      wrapped.get = (path, watcher) => {
        reads.get(zk)!.push(path);
        return zk.get(path, watcher);
      };
      return wrapped;
    };
    const [ownCounted, otherCounted] = [counting(own), counting(other)];
    // /t/b and below through the other client; the rest through the cache's own.
    const clientFor = (path: string): ZkClient => (path.startsWith('/t/b') ? otherCounted : ownCounted);
    const c = createTreeCache(ownCounted, '/t', { route: { clientFor, clients: [otherCounted] } });
    onCleanup(() => c.close());
    await c.start();
    expect(mirror(c)).toEqual(await snapshot(writer, '/t'));
    expect(reads.get(other)!.every((p) => p.startsWith('/t/b'))).toBe(true);
    expect(reads.get(own)!.some((p) => p.startsWith('/t/b'))).toBe(false);
    // The other client's session expires: its nodes are read again (and changes made meanwhile seen);
    // the cache's own client reads nothing again.
    reads.set(own, []);
    reads.set(other, []);
    const session = new Promise((resolve) => other.on('session', resolve));
    await forceExpireSession(other, proxy(), zkConnect);
    await writer.set('/t/b/3', 'while expired');
    await session;
    await eventually(async () => {
      await c.settled();
      expect(mirror(c)).toEqual(await snapshot(writer, '/t'));
    });
    expect(reads.get(own)!.filter((p) => p !== '/t')).toEqual([]);
    expect([...new Set(reads.get(other))].sort()).toEqual(['/t/b', ...[0, 1, 2, 3, 4].map((i) => `/t/b/${i}`)]);
    // Both keep following changes.
    await writer.set('/t/b/4', 'B4');
    await writer.set('/t/a/4', 'A4');
    await eventually(() => {
      expect(c.get('/t/b/4')?.data?.toString()).toBe('B4');
      expect(c.get('/t/a/4')?.data?.toString()).toBe('A4');
    });
  });

  it('runs one reload at a time: session changes that come while one runs are covered by one more walk, not one each', async () => {
    const root = uniqueRoot('tree-reloads');
    const writer = await client(zkConnect, root);
    for (let i = 0; i < 20; i += 1) await writer.mkdirp(`/t/${i}`);
    const zk = await client(zkConnect, root);
    const reads: string[] = [];
    const sessionListeners: Array<(...args: unknown[]) => void> = [];
    const wrapped: ZkClient = Object.create(zk) as ZkClient;
    wrapped.get = (path, watcher) => {
      reads.push(path);
      return zk.get(path, watcher);
    };
    wrapped.on = (event, listener) => {
      if (event === 'session') sessionListeners.push(listener as (...args: unknown[]) => void);
      return zk.on(event, listener);
    };
    const c = createTreeCache(wrapped, '/t');
    onCleanup(() => c.close());
    await c.start();
    reads.length = 0;
    // Five new sessions announced at once (as when every session of a process expires together):
    // each makes every node unwatched, so each alone would walk the whole tree again.
    for (let i = 0; i < 5; i += 1) for (const listener of sessionListeners) listener({ sessionId: `s${i}`, reattached: false });
    await c.settled();
    const perNode = new Map<string, number>();
    for (const p of reads) perNode.set(p, (perNode.get(p) ?? 0) + 1);
    // Every node read again (the first walk), and again at most once (the walk that covers the
    // four requests made while the first ran): twice, not five times.
    expect([...perNode.keys()].sort()).toEqual(['/t', ...Array.from({ length: 20 }, (_, i) => `/t/${i}`)].sort());
    expect(Math.max(...perNode.values())).toBe(2);
    expect(mirror(c)).toEqual(await snapshot(writer, '/t'));
  });

  it('with more watches than a reconnect can restore: after a link drop it sets them all again and sees every change made meanwhile', async () => {
    // A server taking at most 16 KiB per request, and 400 leaves: more watches than one SetWatches
    // request can carry (the console's 70,000 at 10,000 jobs are for the default 1 MiB).
    const maxBuffer = 16 * 1024;
    const server = await startZooKeeper({ juteMaxBuffer: maxBuffer });
    onCleanup(() => server.stop());
    const link = await createTcpProxy({ targetPort: server.clientPort });
    onCleanup(() => link.close());
    const root = uniqueRoot('tree-many-watches');
    const writer = await client(server.connectString, root);
    const leaves = Array.from({ length: 400 }, (_, i) => `/t/dir/leaf-with-a-long-name-${i}`);
    await writer.mkdirp('/t/dir');
    for (const path of leaves) await writer.create(path, 'v0');
    const zk = createZkClient({ connect: link.connectString, root, sessionTimeoutMs: 8000, serverMaxBuffer: maxBuffer });
    onCleanup(() => zk.close());
    await zk.start();
    const c = createTreeCache(zk, '/t');
    onCleanup(() => c.close());
    await c.start();
    const reattached = new Promise((resolve) => zk.on('session', (e) => { if (e.reattached) resolve(e); }));
    link.reset();
    await writer.set(leaves[7]!, 'changed while the link was down');
    await reattached;
    await writer.set(leaves[300]!, 'changed after');
    await eventually(async () => {
      await c.settled();
      expect(c.get(leaves[7]!)?.data?.toString()).toBe('changed while the link was down');
      expect(c.get(leaves[300]!)?.data?.toString()).toBe('changed after');
    }, { timeoutMs: 20_000 });
    expect(mirror(c)).toEqual(await snapshot(writer, '/t'));
    // Every node is watched again: one more change anywhere is seen.
    await writer.set(leaves[399]!, 'and one more');
    await eventually(() => expect(c.get(leaves[399]!)?.data?.toString()).toBe('and one more'), { timeoutMs: 20_000 });
  }, 60_000);

  it('re-reads a busy node once for changes that come within its delay, while its creation and deletion are seen at once', async () => {
    const root = uniqueRoot('tree-busy');
    const writer = await client(zkConnect, root);
    await writer.mkdirp('/t/busy/0');
    const zk = await client(zkConnect, root);
    // The cache's client, counting its reads of each path (a real session underneath).
    const reads = new Map<string, number>();
    const counting: ZkClient = Object.create(zk) as ZkClient;
    counting.get = (path, watcher) => {
      reads.set(path, (reads.get(path) ?? 0) + 1);
      return zk.get(path, watcher);
    };
    const c = createTreeCache(counting, '/t', { busy: { match: (p) => p.startsWith('/t/busy/'), delayMs: 1000 } });
    onCleanup(() => c.close());
    await c.start();
    const updates: string[] = [];
    c.on('node:updated', (n) => updates.push(`${n.path}=${n.data?.toString()}`));
    const readsBefore = reads.get('/t/busy/0');
    // A run's claim and completion, back to back: one re-read, one update, with the last value.
    await writer.set('/t/busy/0', 'claimed');
    await writer.set('/t/busy/0', 'done');
    await c.settled();
    expect(c.get('/t/busy/0')?.data?.toString()).toBe('done');
    expect(updates).toEqual(['/t/busy/0=done']);
    expect(reads.get('/t/busy/0')).toBe(readsBefore! + 1);
    // A new busy node is read at once, a deleted one dropped at once.
    await writer.create('/t/busy/1', 'new');
    await eventually(() => expect(c.get('/t/busy/1')?.data?.toString()).toBe('new'));
    await writer.delete('/t/busy/0');
    await eventually(() => expect(c.get('/t/busy/0')).toBeUndefined());
    await c.settled();
    expect(mirror(c)).toEqual(await snapshot(writer, '/t'));
  });

  it("bounds the busy nodes' re-reads in flight; caughtUp() waits for the other nodes' reads only, settled() for all", async () => {
    const root = uniqueRoot('tree-busy-bound');
    const writer = await client(zkConnect, root);
    const busy = Array.from({ length: 20 }, (_, i) => `/t/busy/${i}`);
    for (const path of busy) await writer.mkdirp(path);
    await writer.mkdirp('/t/config');
    // Through the proxy: every answer 50 ms late, so the busy re-reads queue up.
    const zk = await client(proxy().connectString, root);
    let busyReading = 0;
    let mostBusyReading = 0;
    const counting: ZkClient = Object.create(zk) as ZkClient;
    counting.get = async (path, watcher) => {
      const isBusy = path.startsWith('/t/busy/');
      if (isBusy) mostBusyReading = Math.max(mostBusyReading, (busyReading += 1));
      try {
        return await zk.get(path, watcher);
      } finally {
        if (isBusy) busyReading -= 1;
      }
    };
    const c = createTreeCache(counting, '/t', { busy: { match: (p) => p.startsWith('/t/busy/'), delayMs: 0, concurrency: 2 } });
    onCleanup(() => c.close());
    await c.start();
    mostBusyReading = 0;
    proxy().setDelay(50);
    try {
      for (const path of busy) await writer.set(path, 'changed');
      await writer.set('/t/config', 'v2');
      await eventually(() => expect(c.get('/t/busy/0')?.data?.toString()).toBe('changed'));
      await c.caughtUp();
      // The config's re-read did not wait for the busy queue: it is in, and busy nodes are still to come.
      expect(c.get('/t/config')?.data?.toString()).toBe('v2');
      expect(busy.filter((path) => c.get(path)?.data?.toString() !== 'changed').length).toBeGreaterThan(0);
      await c.settled();
      expect(busy.every((path) => c.get(path)?.data?.toString() === 'changed')).toBe(true);
      expect(mostBusyReading).toBe(2);
    } finally {
      proxy().setDelay(0);
    }
  });

  it('mirrors only what `include` admits and lists children only where `descend` says so', async () => {
    const root = uniqueRoot('tree-filter');
    const writer = await client(zkConnect, root);
    await writer.mkdirp('/t/jobs/a/shards/0');
    await writer.mkdirp('/t/skip/x');
    const c = createTreeCache(await client(zkConnect, root), '/t', {
      include: (p) => !p.startsWith('/t/skip'),
      descend: (p) => !/^\/t\/jobs\/[^/]+$/.test(p),
    });
    onCleanup(() => c.close());
    await c.start();
    expect(c.paths()).toEqual(['/t', '/t/jobs', '/t/jobs/a']);
    await writer.create('/t/jobs/a/assignment', 'x');
    await writer.create('/t/jobs/b', 'B');
    await eventually(() => expect(c.paths()).toEqual(['/t', '/t/jobs', '/t/jobs/a', '/t/jobs/b']));
  });

  it('honours maxDepth', async () => {
    const root = uniqueRoot('tree-depth');
    const writer = await client(zkConnect, root);
    await writer.mkdirp('/t/a/b/c');
    const c = cache(await client(zkConnect, root), '/t', 1);
    await c.start();
    expect(c.paths()).toEqual(['/t', '/t/a']);
  });
});
