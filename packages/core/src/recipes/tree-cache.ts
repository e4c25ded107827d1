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
 * - Nodes declared `busy` (see {@link TreeCacheOptions.busy}) are re-read after a delay, a bounded
 *   number at a time: their changes reach the mirror late under a backlog, and never make the
 *   client's other requests wait behind them. `caughtUp()` waits for every read but theirs.
 * - Nodes can be read (and watched) through other sessions ({@link TreeCacheOptions.route}), so
 *   that no session holds more watches than its client handles well. A node is added to the mirror
 *   only below a node already there: a late answer from one session cannot bring back a node whose
 *   parent another session saw go.
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
  /**
   * Nodes whose data changes all the time (the console's shard nodes: a claim and a completion per
   * run). After its watch fires, such a node is re-read `delayMs` later (default
   * {@link BUSY_DELAY_MS}: a short run's claim and completion then cost one read), oldest first, at
   * most `concurrency` at a time (default {@link BUSY_CONCURRENCY}). Re-read at once, 1,000 changes a
   * second filled the client's request slots on a busy machine, and a write waited behind them for
   * tens of seconds. Their creation, deletion and first read are not deferred.
   */
  busy?: { match: (path: string) => boolean; delayMs?: number; concurrency?: number };
  /**
   * The client through which each node's data (`'data'`) or children (`'children'`) are read and
   * watched (default: the cache's own, for every node), and every client it may name. The C
   * client's work on a connection event grows with the square of the watches it holds — 0.26 s of
   * blocked event loop at 10,000 watches, 0.93 s at 20,000, some 20 s at the 90,000 of a console
   * with 10,000 jobs — so a large mirror spreads its watches. The root is always read through the
   * cache's own client; a session lost by one client re-reads only that client's nodes.
   */
  route?: { clientFor: (path: string, what: 'data' | 'children') => ZkClient; clients: readonly ZkClient[] };
}

/** The default delay of a busy node's re-read, in ms (see {@link TreeCacheOptions.busy}). */
export const BUSY_DELAY_MS = 1000;
/** The default number of busy nodes' re-reads outstanding at once (see {@link TreeCacheOptions.busy}). */
export const BUSY_CONCURRENCY = 16;

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
  /** Resolves when no read is in flight or waiting (tests use it to compare with the server). */
  settled(): Promise<void>;
  /**
   * Resolves when no read is in flight but the busy nodes' re-reads (see
   * {@link TreeCacheOptions.busy}): a change this client made, and was answered for, to any other
   * node is then in the mirror — a write's watch event comes before its answer on the same session.
   */
  caughtUp(): Promise<void>;
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
  // Reads in flight: all of them, and those of busy nodes' deferred re-reads (see options.busy).
  let inFlight = 0;
  let busyInFlight = 0;
  let idleWaiters: Array<() => void> = [];
  let caughtUpWaiters: Array<() => void> = [];
  const busyMatch = options.busy?.match ?? (() => false);
  const clientFor = (path: string, what: 'data' | 'children'): ZkClient => (path === root || !options.route ? zk : options.route.clientFor(path, what));
  const clients = [...new Set([zk, ...(options.route?.clients ?? [])])];
  const busyDelayMs = options.busy?.delayMs ?? BUSY_DELAY_MS;
  const busyConcurrency = Math.max(1, options.busy?.concurrency ?? BUSY_CONCURRENCY);
  // Busy nodes waiting for their re-read → when it is due; in the order their watches fired (so,
  // with one delay for all, in due order).
  const busyDue = new Map<string, number>();
  let busyTimer: NodeJS.Timeout | undefined;
  let started: Promise<void> | undefined;
  const offs: Array<() => void> = [];
  const depthOf = (path: string): number => (path === root ? 0 : path.slice(root === '/' ? 0 : root.length).split('/').length - 1);

  function track<T>(work: Promise<T>, busy = false): void {
    inFlight += 1;
    if (busy) busyInFlight += 1;
    work
      .catch((error) => {
        const e = toError(error);
        // Connection trouble is healed by the re-read after reconnect; anything else is reported.
        if (!isRetryable(e) && !hasErrorCode(e, 'closed')) emitter.emit('error', e);
      })
      .finally(() => {
        inFlight -= 1;
        if (busy) {
          busyInFlight -= 1;
          pumpBusy();
        }
        if (inFlight === 0 && !isInitialized && !closed) {
          isInitialized = true;
          emitter.emit('initialized', { nodes: entries.size });
        }
        wakeWaiters();
      });
  }

  function wakeWaiters(): void {
    if (inFlight === busyInFlight && caughtUpWaiters.length > 0) {
      const waiters = caughtUpWaiters;
      caughtUpWaiters = [];
      for (const w of waiters) w();
    }
    if (inFlight === 0 && busyDue.size === 0 && idleWaiters.length > 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Starts the busy re-reads that are due, up to the bound; arms a timer for the next one. */
  function pumpBusy(): void {
    if (busyTimer) clearTimeout(busyTimer);
    busyTimer = undefined;
    if (closed) return;
    const now = Date.now();
    for (const [path, due] of busyDue) {
      if (busyInFlight >= busyConcurrency) return;
      if (due > now) {
        busyTimer = setTimeout(pumpBusy, due - now);
        return;
      }
      busyDue.delete(path);
      track(loadNode(path, false), true);
    }
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
      busyDue.delete(event.path);
      removeSubtree(event.path);
      if (event.path === root) track(loadRoot());
      wakeWaiters();
      return;
    }
    if (busyMatch(event.path) && entries.has(event.path)) {
      if (!busyDue.has(event.path)) busyDue.set(event.path, Date.now() + busyDelayMs);
      if (!busyTimer && busyInFlight < busyConcurrency) pumpBusy();
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
      result = await clientFor(path, 'data').get(path, watch ? onDataEvent : undefined);
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
      // Only below a node in the mirror: an answer that comes after its parent went (seen through
      // another session) would bring back an orphan.
      const parent = path === root ? undefined : entries.get(path.slice(0, path.lastIndexOf('/')) || '/');
      if (path !== root && !parent) return;
      entries.set(path, { node, children: new Set() });
      parent?.children.add(path.slice(path.lastIndexOf('/') + 1));
      emitter.emit('node:added', node);
    } else if (existing.node.stat.mzxid !== node.stat.mzxid || existing.node.stat.czxid !== node.stat.czxid) {
      existing.node = node;
      emitter.emit('node:updated', node);
    }
    if (withChildren) await loadChildren(path);
  }

  /** Whether `path`'s children are listed (and child-watched). */
  const listsChildren = (path: string): boolean => depthOf(path) < maxDepth && descend(path);

  async function loadChildren(path: string): Promise<void> {
    if (closed || !listsChildren(path)) return;
    let names: string[];
    try {
      const watch = !childWatched.has(path);
      names = await clientFor(path, 'children').getChildren(path, watch ? onChildEvent : undefined);
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

  let walking = false;
  let walkAgain = false;

  /** Reads everything again (after a reconnect or a new session of `client`). */
  function reload(newSession: boolean, client: ZkClient = zk): void {
    if (closed) return;
    if (newSession) {
      // The walk below reads again every node of that session (none of its watches survived).
      for (const path of dataWatched) if (clientFor(path, 'data') === client) dataWatched.delete(path);
      for (const path of childWatched) if (clientFor(path, 'children') === client) childWatched.delete(path);
      for (const path of busyDue.keys()) if (clientFor(path, 'data') === client) busyDue.delete(path);
      if (client === zk) rootWatched = false;
    }
    // One walk at a time: a reload asked for while one runs is covered by one more walk after it.
    // (Nine sessions of the console lost at once started nine walks over the whole tree, each
    // re-reading what the others were reading: the heap ran out at 10,000 jobs.)
    if (walking) {
      walkAgain = true;
      return;
    }
    const walkUntilCovered = async (): Promise<void> => {
      try {
        do {
          walkAgain = false;
          try {
            await walk();
          } catch (error) {
            if (!walkAgain || closed) throw error; // connection trouble: the next reconnect reloads
          }
        } while (walkAgain && !closed);
      } finally {
        walking = false;
      }
    };
    walking = true;
    track(walkUntilCovered());
  }

  async function walk(): Promise<void> {
    await loadRoot();
    // Paths cached but missing on the server are removed by loadChildren; then re-read the
    // nodes whose watch could not be set (a read that failed with connection loss). A node whose
    // children are not listed has no child watch to miss: counted as unwatched, every leaf was
    // read again on each reconnect — 60,000 reads for the console at 10,000 jobs, each time its
    // link dropped on a saturated machine, and its own requests queued behind them.
    const unwatched = [...entries.keys()].filter((p) => !dataWatched.has(p) || (listsChildren(p) && !childWatched.has(p)));
    await Promise.all(unwatched.map((p) => (entries.has(p) ? loadNode(p, true) : undefined)));
  }

  const cache: TreeCache = {
    root,
    get initialized() {
      return isInitialized;
    },
    on: emitter.on,
    start() {
      if (started) return started;
      for (const client of clients) {
        offs.push(
          client.on('session', () => reload(true, client)),
          client.on('state', (s) => { if (s.state === 'RECONNECTED' && !s.watchesLost) reload(false, client); }),
        );
      }
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
      if (inFlight === 0 && busyDue.size === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    caughtUp() {
      if (inFlight === busyInFlight) return Promise.resolve();
      return new Promise((resolve) => caughtUpWaiters.push(resolve));
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const off of offs.splice(0)) off();
      if (busyTimer) clearTimeout(busyTimer);
      busyTimer = undefined;
      busyDue.clear();
      entries.clear();
      const waiters = [...idleWaiters, ...caughtUpWaiters];
      idleWaiters = [];
      caughtUpWaiters = [];
      for (const w of waiters) w();
      emitter.clear();
    },
    [Symbol.asyncDispose]() {
      return cache.close();
    },
  };
  return cache;
}
