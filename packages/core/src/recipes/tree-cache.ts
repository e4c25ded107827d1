/**
 * Tree cache (Curator's TreeCache): a watch-fed, in-memory mirror of a subtree.
 *
 * Guarantees:
 * - After `initialized`, the mirror converges to the server's state: every node change, creation
 *   and deletion under the root (down to `maxDepth`) is seen, in ZooKeeper's order for each node,
 *   and reported as `node:added`, `node:updated` or `node:removed`.
 * - Each node costs at most one data watch and one child watch at a time (no duplicate watches).
 * - After a reconnect or a new session (whose watches are all gone) the whole tree is read again and
 *   the differences are reported as events: the mirror never stays stale after a session change.
 * - `get` and `children` never touch the network.
 *
 * Not guaranteed: that every intermediate value of a node is seen (a node changed twice quickly may
 * be reported once, with its latest data); a consistent snapshot across several nodes at one instant.
 */
import { OrreryError, toError, hasErrorCode, isRetryable } from '../errors.js';
import { createEmitter, type Subscribable } from '../events.js';
import type { WatchEvent, ZkClient, ZkStat } from '../zk/client.js';

/** A node in the mirror. */
export interface CachedNode {
  path: string;
  data: Buffer | null;
  stat: ZkStat;
}

/** Events of a {@link TreeCache}. */
export interface TreeCacheEvents {
  /** The first full load finished. */
  initialized: { nodes: number };
  'node:added': CachedNode;
  'node:updated': CachedNode;
  'node:removed': { path: string };
  error: Error;
}

/** Options of {@link createTreeCache}. */
export interface TreeCacheOptions {
  /** How deep below the root to mirror (0 = the root only). Default unlimited. */
  maxDepth?: number;
  /**
   * Which nodes to mirror: a node for which this returns false is neither read nor watched (nor
   * anything below it). Default: every node.
   */
  include?: (path: string) => boolean;
  /**
   * Whether to list (and watch) a mirrored node's children. Default: yes. Saying no saves a child
   * watch on nodes whose children are of no interest.
   */
  descend?: (path: string) => boolean;
}

/** A handle on a tree cache. */
export interface TreeCache extends Subscribable<TreeCacheEvents> {
  readonly root: string;
  readonly initialized: boolean;
  /** Starts watching; resolves once the first full load finished. */
  start(): Promise<void>;
  /** The cached node at `path`, if any. */
  get(path: string): CachedNode | undefined;
  /** Names of the cached children of `path`, sorted. */
  children(path: string): string[];
  /** Every cached path, sorted. */
  paths(): string[];
  /** Resolves when no read is in flight (tests use it to compare with the server). */
  settled(): Promise<void>;
  /** Stops; the mirror is dropped. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

interface Entry {
  node: CachedNode;
  children: Set<string>;
}

const join = (parent: string, child: string): string => (parent === '/' ? `/${child}` : `${parent}/${child}`);

/** Creates a tree cache of `root`; call `start()`. */
export function createTreeCache(zk: ZkClient, root: string, options: TreeCacheOptions = {}): TreeCache {
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  const include = options.include ?? (() => true);
  const descend = options.descend ?? (() => true);
  const emitter = createEmitter<TreeCacheEvents>();
  const entries = new Map<string, Entry>();
  // Watches this session has armed, per path (each fires once, then must be set again).
  const dataWatched = new Set<string>();
  const childWatched = new Set<string>();
  let rootWatched = false;
  let closed = false;
  let isInitialized = false;
  let inFlight = 0;
  let idleWaiters: Array<() => void> = [];
  let started: Promise<void> | undefined;
  const offs: Array<() => void> = [];
  const depthOf = (path: string): number => (path === root ? 0 : path.slice(root === '/' ? 0 : root.length).split('/').length - 1);

  function track<T>(work: Promise<T>): void {
    inFlight += 1;
    work
      .catch((error) => {
        const e = toError(error);
        // Connection trouble is healed by the re-read after reconnect; anything else is reported.
        if (!isRetryable(e) && !hasErrorCode(e, 'closed')) emitter.emit('error', e);
      })
      .finally(() => {
        inFlight -= 1;
        if (inFlight === 0) {
          if (!isInitialized && !closed) {
            isInitialized = true;
            emitter.emit('initialized', { nodes: entries.size });
          }
          const waiters = idleWaiters;
          idleWaiters = [];
          for (const w of waiters) w();
        }
      });
  }

  function removeSubtree(path: string): void {
    const entry = entries.get(path);
    if (!entry) return;
    for (const child of entry.children) removeSubtree(join(path, child));
    entries.delete(path);
    const parentPath = path.slice(0, path.lastIndexOf('/')) || '/';
    entries.get(parentPath)?.children.delete(path.slice(path.lastIndexOf('/') + 1));
    emitter.emit('node:removed', { path });
  }

  function onDataEvent(event: WatchEvent): void {
    dataWatched.delete(event.path);
    if (closed) return;
    if (event.type === 'deleted') {
      removeSubtree(event.path);
      if (event.path === root) track(loadRoot());
      return;
    }
    track(loadNode(event.path, false));
  }

  function onChildEvent(event: WatchEvent): void {
    childWatched.delete(event.path);
    if (closed) return;
    track(loadChildren(event.path));
  }

  function onRootExists(): void {
    rootWatched = false;
    if (!closed) track(loadRoot());
  }

  async function loadRoot(): Promise<void> {
    if (!rootWatched) {
      const stat = await zk.exists(root, onRootExists);
      rootWatched = true;
      if (!stat) return; // the watch tells us when it appears
    }
    await loadNode(root, true);
  }

  async function loadNode(path: string, withChildren: boolean): Promise<void> {
    if (closed) return;
    let result: { data: Buffer | null; stat: ZkStat };
    try {
      const watch = !dataWatched.has(path);
      result = await zk.get(path, watch ? onDataEvent : undefined);
      if (watch) dataWatched.add(path);
    } catch (error) {
      if (hasErrorCode(error, 'no-node')) {
        removeSubtree(path);
        return;
      }
      throw error;
    }
    if (closed) return;
    const node: CachedNode = { path, data: result.data, stat: result.stat };
    const existing = entries.get(path);
    if (!existing) {
      entries.set(path, { node, children: new Set() });
      if (path !== root) entries.get(path.slice(0, path.lastIndexOf('/')) || '/')?.children.add(path.slice(path.lastIndexOf('/') + 1));
      emitter.emit('node:added', node);
    } else if (existing.node.stat.mzxid !== node.stat.mzxid || existing.node.stat.czxid !== node.stat.czxid) {
      existing.node = node;
      emitter.emit('node:updated', node);
    }
    if (withChildren) await loadChildren(path);
  }

  async function loadChildren(path: string): Promise<void> {
    if (closed || depthOf(path) >= maxDepth || !descend(path)) return;
    let names: string[];
    try {
      const watch = !childWatched.has(path);
      names = await zk.getChildren(path, watch ? onChildEvent : undefined);
      if (watch) childWatched.add(path);
    } catch (error) {
      if (hasErrorCode(error, 'no-node')) {
        removeSubtree(path);
        return;
      }
      throw error;
    }
    const entry = entries.get(path);
    if (!entry || closed) return;
    names = names.filter((name) => include(join(path, name)));
    const now = new Set(names);
    for (const old of [...entry.children]) if (!now.has(old)) removeSubtree(join(path, old));
    await Promise.all(names.map((name) => {
      const child = join(path, name);
      // Known children only need a fresh read after a session change (see reload).
      if (entry.children.has(name) && dataWatched.has(child)) return Promise.resolve();
      return loadNode(child, true);
    }));
  }

  /** Reads everything again (after a reconnect or a new session). */
  function reload(newSession: boolean): void {
    if (closed) return;
    if (newSession) {
      dataWatched.clear();
      childWatched.clear();
      rootWatched = false;
    }
    const walk = async (): Promise<void> => {
      await loadRoot();
      // Paths cached but missing on the server are removed by loadChildren; then re-read the
      // nodes whose watch could not be set (a read that failed with connection loss).
      const unwatched = [...entries.keys()].filter((p) => !dataWatched.has(p) || !childWatched.has(p));
      await Promise.all(unwatched.map((p) => (entries.has(p) ? loadNode(p, true) : undefined)));
    };
    track(walk());
  }

  const cache: TreeCache = {
    root,
    get initialized() {
      return isInitialized;
    },
    on: emitter.on,
    start() {
      if (started) return started;
      offs.push(
        zk.on('session', () => reload(true)),
        zk.on('state', (s) => { if (s.state === 'RECONNECTED' && !s.newSession) reload(false); }),
      );
      started = new Promise<void>((resolve, reject) => {
        const offInit = emitter.on('initialized', () => {
          offInit();
          offErr();
          resolve();
        });
        const offErr = emitter.on('error', (e) => {
          if (isInitialized) return;
          offInit();
          offErr();
          reject(e);
        });
        void zk.whenConnected().then(() => track(loadRoot()), reject);
      });
      return started;
    },
    get(path) {
      return entries.get(path)?.node;
    },
    children(path) {
      return [...(entries.get(path)?.children ?? [])].sort();
    },
    paths() {
      return [...entries.keys()].sort();
    },
    settled() {
      if (inFlight === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const off of offs.splice(0)) off();
      entries.clear();
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
      emitter.clear();
    },
    [Symbol.asyncDispose]() {
      return cache.close();
    },
  };
  return cache;
}
