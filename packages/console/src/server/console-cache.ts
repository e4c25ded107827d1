/**
 * The console's read model: a watch-fed mirror (core's tree cache) of the namespaces and of the
 * console's own state (users, tokens, the audit ring, the session secret), with typed, parsed views.
 *
 * What it guarantees:
 * - Reads (`namespaces()`, `jobs()`, `job()`, `shards()`, `executors()`, `users()`, …) never touch
 *   ZooKeeper: a GET served from here makes no round trip. A node's data is parsed once per write
 *   (memoised by its `mzxid`), so 10,000 jobs cost 10,000 parses only when they change. A job's
 *   view (`job()`) and a namespace's sorted job names (`jobNames()`) are built once and kept until
 *   a node they were built from changes, so a request that walks 10,000 jobs does 10,000 map
 *   lookups, not 60,000 path builds, lookups and sorts. The names of each group's jobs
 *   (`jobNamesInGroup()`) are kept until a job is added, removed or reconfigured.
 * - After a new ZooKeeper session the mirror is read again and converges (the tree cache's rule);
 *   every change is announced on `change` (what the live event stream forwards).
 * - With `watchClients`, what others write (assignments, applied, shard folders and shards, and the
 *   list of a job node's children: eight of a job's nine watches) is read and watched through those
 *   sessions, a job's all through one: no session holds more watches than its client handles well
 *   (see the tree cache's `route`). What the console writes itself (job configs, the namespaces'
 *   and its own nodes) stays on `zk`, so a write's answer still comes after its watch event
 *   (`caughtUp`).
 * - A node whose data is invalid is a value with its `problem`, never an exception.
 *
 * Not mirrored (read on demand by the routes that need them, to keep memory bounded): job config
 * history (`/console/history`), leader latch nodes, commands, the last-applied entries.
 */
import {
  checkAssignment,
  checkExecutorAssignment,
  checkExecutorInfo,
  checkExecutorMeta,
  checkJobConfig,
  checkNamespaceInfo,
  checkShardState,
  checkShardingState,
  createEmitter,
  createTreeCache,
  inspectNode,
  matchPath,
  paths,
  type Assignment,
  type CachedNode,
  type ExecutorAssignment,
  type ExecutorInfo,
  type ExecutorMeta,
  type JobConfig,
  type NamespaceInfo,
  type NodeReading,
  type PathMatch,
  type ShardState,
  type ShardingState,
  type Subscribable,
  type TreeCache,
  type ValidationIssue,
  type ZkClient,
  type ZkStat,
} from '@orrery/core';

/** A node's parsed value, or what is wrong with it; with its stat (version for compare-and-set). */
export type Parsed<T> = ({ ok: true; value: T } | { ok: false; problem: string }) & { stat: ZkStat };

/** A job as the console shows it. */
export interface CachedJob {
  name: string;
  config: Parsed<JobConfig>;
  assignment: Parsed<Assignment> | undefined;
  /** Item → its shard node (absent: never claimed). */
  shards: Map<number, Parsed<ShardState>>;
}

/** An executor as the console shows it. */
export interface CachedExecutor {
  name: string;
  /** The presence (absent: offline). */
  presence: Parsed<ExecutorInfo> | undefined;
  meta: Parsed<ExecutorMeta> | undefined;
  assignment: Parsed<ExecutorAssignment> | undefined;
}

/** What changed (for the live stream): the namespace and the kind of thing. */
export interface CacheChange {
  namespace: string | undefined;
  kind: 'namespace' | 'job' | 'assignment' | 'shard' | 'executor' | 'console';
  job?: string;
  executor?: string;
  item?: number;
}

/** Events of a {@link ConsoleCache}. */
export interface ConsoleCacheEvents {
  change: CacheChange;
  error: Error;
}

/** The console's mirror; see the module header. */
export interface ConsoleCache extends Subscribable<ConsoleCacheEvents> {
  readonly initialized: boolean;
  start(): Promise<void>;
  /** Every namespace (sorted), parsed. */
  namespaces(): Array<{ name: string; info: Parsed<NamespaceInfo> }>;
  namespace(name: string): Parsed<NamespaceInfo> | undefined;
  sharding(namespace: string): Parsed<ShardingState> | undefined;
  /** Names of a namespace's jobs, sorted (shared: do not change it). */
  jobNames(namespace: string): readonly string[];
  job(namespace: string, name: string): CachedJob | undefined;
  /** Names of a namespace's jobs (valid configs) in `group`, sorted (shared: do not change it). */
  jobNamesInGroup(namespace: string, group: string): readonly string[];
  /** Names of a namespace's executors (online or not), sorted. */
  executorNames(namespace: string): string[];
  executor(namespace: string, name: string): CachedExecutor | undefined;
  /** A node under the console's own subtree (`/console/...`), raw. */
  consoleNode(path: string): CachedNode | undefined;
  /** Children of a node under `/console`. */
  consoleChildren(path: string): string[];
  /** Resolves when no read is in flight or waiting (tests). */
  settled(): Promise<void>;
  /**
   * Resolves when every read but the shard nodes' deferred re-reads is done: a write this console was
   * answered for is then in the mirror (the console never writes shard nodes; see createConsoleCache).
   */
  caughtUp(): Promise<void>;
  close(): Promise<void>;
}

/** A job's shard node (`/namespaces/<ns>/jobs/<job>/shards/<item>`): written by executors twice a run. */
function isShardNode(path: string): boolean {
  return path.includes('/shards/') && matchPath(path)?.kind === 'job-shard';
}

/** Children of a job node that the console mirrors. */
const MIRRORED_JOB_CHILDREN = new Set(['assignment', 'applied', 'shards']);

/** Which paths the mirror holds (see the module header). */
export function isMirrored(path: string): boolean {
  if (path === '/' || path === '/namespaces' || path === paths.console()) return true;
  if (path.startsWith(`${paths.console()}/`)) return !path.startsWith(`${paths.console()}/history`);
  if (!path.startsWith('/namespaces/')) return false;
  const m = matchPath(path);
  if (!m) return false;
  switch (m.kind) {
    case 'job-leader':
    case 'job-leader-node':
    case 'job-commands':
    case 'job-command':
    case 'job-last-applied':
      return false;
    default:
      return true;
  }
}

/** A node holding no data read as `{}` (settings whose every field has a default). */
function withEmptyAsObject(node: CachedNode | undefined): CachedNode | undefined {
  return node && node.data === null ? { ...node, data: Buffer.from('{}') } : node;
}

/**
 * Whether the mirror lists (and watches) a node's children: not for the leaves of Orrery's tree —
 * shard nodes, assignments, presences, audit entries — which have none (a child watch and a
 * listing per node saved: about half of the console's watches at 10,000 jobs).
 */
export function hasMirroredChildren(path: string): boolean {
  if (path === '/' || path === '/namespaces' || path === paths.console()) return true;
  if (path.startsWith(`${paths.console()}/`)) {
    // /console/users, /console/tokens, /console/audit: containers; their entries are leaves.
    return path.split('/').length <= 3;
  }
  const m = matchPath(path);
  if (!m) return false;
  switch (m.kind) {
    case 'namespace':
    case 'jobs':
    case 'job':
    case 'job-shards':
    case 'executors':
    case 'executor':
      return true;
    default:
      return false;
  }
}

/** The kinds of nodes others write, which the console's extra sessions may watch (see the module header). */
const WATCHED_ELSEWHERE = new Set<PathMatch['kind']>(['job-assignment', 'job-applied', 'job-shards', 'job-shard']);

/**
 * The client through which the cache reads `path`'s data or children: one of `watchClients` for
 * what others write — the nodes of {@link WATCHED_ELSEWHERE}, and a job node's children (the
 * console creates a job node alone) — chosen by namespace and job, so a job's share one; else `zk`.
 */
export function cacheClientFor<C>(path: string, what: 'data' | 'children', zk: C, watchClients: readonly C[]): C {
  if (watchClients.length === 0 || !path.startsWith('/namespaces/')) return zk;
  const m = matchPath(path);
  if (!m || !(WATCHED_ELSEWHERE.has(m.kind) || (m.kind === 'job' && what === 'children')) || !('job' in m)) return zk;
  let hash = 2166136261;
  for (const c of `${m.namespace}/${m.job}`) hash = Math.imul(hash ^ c.charCodeAt(0), 16777619);
  return watchClients[(hash >>> 0) % watchClients.length]!;
}

/** Options of {@link createConsoleCache}. */
export interface ConsoleCacheOptions {
  /** Extra sessions that read and watch the nodes others write (see the module header). */
  watchClients?: readonly ZkClient[];
}

/** Creates the mirror under the client's root; call `start()`. */
export function createConsoleCache(zk: ZkClient, options: ConsoleCacheOptions = {}): ConsoleCache {
  const watchClients = options.watchClients ?? [];
  const emitter = createEmitter<ConsoleCacheEvents>();
  // The root's children other than /namespaces and /console (the allocator's /sharding) are not read.
  // Shard nodes change twice a run — 1,000 changes a second at 10,000 jobs × 3 firing once a minute:
  // their re-reads are deferred and bounded (the tree cache's `busy`), so that the console's own
  // requests never queue behind them; under a backlog the shards' states lag instead.
  const tree: TreeCache = createTreeCache(zk, '/', {
    include: isMirrored,
    descend: hasMirroredChildren,
    busy: { match: isShardNode },
    ...(watchClients.length > 0 ? { route: { clientFor: (path: string, what: 'data' | 'children') => cacheClientFor(path, what, zk, watchClients), clients: watchClients } } : {}),
  });
  const memo = new Map<string, { mzxid: number; parsed: Parsed<unknown> }>();
  // Built on first read, dropped when a node under the job (or the list of jobs) changes.
  const jobViews = new Map<string, Map<string, CachedJob>>();
  const jobNameLists = new Map<string, readonly string[]>();
  const groupIndexes = new Map<string, Map<string, string[]>>();

  function parse<T>(node: CachedNode | undefined, check: (input: unknown) => { ok: true; value: T } | { ok: false; issues: ValidationIssue[] }): Parsed<T> | undefined {
    if (!node) return undefined;
    const hit = memo.get(node.path);
    if (hit && hit.mzxid === node.stat.mzxid) return hit.parsed as Parsed<T>;
    const reading: NodeReading<T> = inspectNode(node.data, node.path, check);
    const parsed: Parsed<T> = reading.ok ? { ok: true, value: reading.value, stat: node.stat } : { ok: false, problem: reading.problem, stat: node.stat };
    memo.set(node.path, { mzxid: node.stat.mzxid, parsed });
    return parsed;
  }

  /** Drops the views built from the node at `path` (`listing`: it was added or removed), then announces the change. */
  function changed(path: string, listing: boolean): void {
    const m = path.startsWith('/namespaces/') ? matchPath(path) : undefined;
    if (m && 'job' in m) jobViews.get(m.namespace)?.delete(m.job);
    if (m && listing && (m.kind === 'job' || m.kind === 'jobs' || m.kind === 'namespace')) jobNameLists.delete(m.namespace);
    if (m && (m.kind === 'job' || (listing && (m.kind === 'jobs' || m.kind === 'namespace')))) groupIndexes.delete(m.namespace);
    announce(path, m);
  }

  function announce(path: string, m: PathMatch | undefined): void {
    if (path.startsWith(paths.console())) {
      emitter.emit('change', { namespace: undefined, kind: 'console' });
      return;
    }
    if (!m || m.kind === 'namespaces') return;
    switch (m.kind) {
      case 'namespace':
      case 'namespace-sharding':
      case 'jobs':
      case 'executors':
        emitter.emit('change', { namespace: m.namespace, kind: 'namespace' });
        return;
      case 'job':
      case 'job-applied':
        emitter.emit('change', { namespace: m.namespace, kind: 'job', job: m.job });
        return;
      case 'job-assignment':
        emitter.emit('change', { namespace: m.namespace, kind: 'assignment', job: m.job });
        return;
      case 'job-shards':
        return;
      case 'job-shard':
        emitter.emit('change', { namespace: m.namespace, kind: 'shard', job: m.job, item: m.item });
        return;
      case 'executor':
      case 'executor-presence':
      case 'executor-meta':
      case 'executor-assignment':
        emitter.emit('change', { namespace: m.namespace, kind: 'executor', executor: m.executor });
        return;
      default:
        return;
    }
  }

  tree.on('node:added', (node) => changed(node.path, true));
  tree.on('node:updated', (node) => changed(node.path, false));
  tree.on('node:removed', ({ path }) => {
    memo.delete(path);
    changed(path, true);
  });
  tree.on('error', (error) => emitter.emit('error', error));

  /** A job's view read from the mirror (see {@link ConsoleCache.job}; memoised by the caller). */
  function readJob(namespace: string, name: string): CachedJob | undefined {
    const config = parse(tree.get(paths.job(namespace, name)), (input: unknown) => {
      const r = checkJobConfig(input);
      if (r.ok && r.value.name !== name) return { ok: false as const, issues: [{ field: 'name', rule: 'match', message: `name: the config names another job ('${r.value.name}')` }] };
      return r;
    });
    if (!config) return undefined;
    const shards = new Map<number, Parsed<ShardState>>();
    for (const child of tree.children(paths.jobShards(namespace, name))) {
      const item = Number(child);
      if (!Number.isInteger(item) || item < 0 || String(item) !== child) continue;
      const parsed = parse(tree.get(paths.jobShard(namespace, name, item)), checkShardState);
      if (parsed) shards.set(item, parsed);
    }
    return { name, config, assignment: parse(tree.get(paths.jobAssignment(namespace, name)), checkAssignment), shards };
  }

  const cache: ConsoleCache = {
    get initialized() {
      return tree.initialized;
    },
    on: emitter.on,
    start: () => tree.start(),
    namespaces() {
      return tree.children('/namespaces').flatMap((name) => {
        const info = cache.namespace(name);
        return info ? [{ name, info }] : [];
      });
    },
    namespace(name) {
      const node = tree.get(paths.namespace(name));
      // A namespace node holding nothing is an older or hand-made namespace with default settings.
      if (node && node.data === null) return parse({ ...node, data: Buffer.from('{}') }, checkNamespaceInfo);
      return parse(node, checkNamespaceInfo);
    },
    sharding: (namespace) => parse(tree.get(paths.namespaceSharding(namespace)), checkShardingState),
    jobNames(namespace) {
      let names = jobNameLists.get(namespace);
      if (names === undefined) {
        names = tree.children(paths.jobs(namespace));
        jobNameLists.set(namespace, names);
      }
      return names;
    },
    job(namespace, name) {
      const hit = jobViews.get(namespace)?.get(name);
      if (hit) return hit;
      const view = readJob(namespace, name);
      if (view) {
        let views = jobViews.get(namespace);
        if (!views) jobViews.set(namespace, (views = new Map()));
        views.set(name, view);
      }
      return view;
    },
    jobNamesInGroup(namespace, group) {
      let index = groupIndexes.get(namespace);
      if (index === undefined) {
        index = new Map();
        for (const name of cache.jobNames(namespace)) {
          const config = cache.job(namespace, name)?.config;
          if (!config?.ok) continue;
          for (const g of config.value.groups) {
            let names = index.get(g);
            if (names === undefined) index.set(g, (names = []));
            names.push(name);
          }
        }
        groupIndexes.set(namespace, index);
      }
      return index.get(group) ?? [];
    },
    executorNames: (namespace) => tree.children(paths.executors(namespace)),
    executor(namespace, name) {
      if (!tree.get(paths.executor(namespace, name))) return undefined;
      return {
        name,
        presence: parse(tree.get(paths.executorPresence(namespace, name)), checkExecutorInfo),
        // A meta node holding nothing is not drained (as the allocator reads it).
        meta: parse(withEmptyAsObject(tree.get(paths.executorMeta(namespace, name))), checkExecutorMeta),
        assignment: parse(tree.get(paths.executorAssignment(namespace, name)), checkExecutorAssignment),
      };
    },
    consoleNode: (path) => tree.get(path),
    consoleChildren: (path) => tree.children(path),
    settled: () => tree.settled(),
    caughtUp: () => tree.caughtUp(),
    async close() {
      await tree.close();
      memo.clear();
      emitter.clear();
    },
  };
  return cache;
}
