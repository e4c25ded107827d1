/**
 * A promise-based ZooKeeper client over the npm `zookeeper` package (the official C client).
 *
 * What it guarantees:
 * - Every operation returns a promise that rejects with an {@link OrreryError} whose `code` names
 *   the ZooKeeper result (`no-node`, `bad-version`, `connection-loss`, …) and whose `retryable`
 *   flag says whether trying again may help.
 * - Connection states follow Curator: `CONNECTED` (first session), `SUSPENDED` (the link dropped;
 *   the session may still be alive), `RECONNECTED` (link back — same session, or a new one after
 *   `LOST`), `LOST` (the session is gone: expired on the server, or the link stayed down for a whole
 *   session timeout). After `LOST` the client never uses that session again: it closes the old
 *   handle and opens a new session by itself; the process keeps running.
 * - Watches are one-shot and fire at most once, for data or child events only (the C client's
 *   session events are filtered out). Watches set before a `LOST` never fire: recipes rebuild on
 *   the `session` event.
 * - A session holding more watches than the server takes in one request keeps its link: on a
 *   reconnect the C client restores every watch in one `SetWatches` request, which the server
 *   refuses past `jute.maxbuffer` (a console mirroring 10,000 jobs: 70,000 watches or more, 2.5 MB),
 *   dropping the link again — for ever, every request failing and no watch set. When the link drops
 *   under such a session, this client attaches a new handle to the same session instead, which has
 *   no watches to restore: the session and its ephemeral nodes live on, and the `session` event
 *   (`reattached: true`) has the recipes set their watches again.
 * - All paths are relative to `root` (a chroot, created on every new session).
 *
 * - With `auth` (digest `user:password`), every session authenticates before it is announced, and
 *   every node this client creates gets Orrery's ACL: all permissions for that digest identity,
 *   nothing for anyone else (not even reading). The native client can only create nodes with the
 *   open ACL, so the ACL is set by a second request once the create succeeded, from ACL version 0;
 *   a connection loss between the two is retried once connected, a node found existing with the
 *   open ACL still is secured by whoever meets it, and a node whose ACL someone else changed in
 *   between is deleted again (`no-auth`). Without `auth`, nodes are created open (development).
 *
 * What it does not do: ZooKeeper `multi` (the native client lacks it — Orrery builds every protocol on
 * single-node compare-and-set), or retries (callers decide).
 *
 * Note: this native client is built single-threaded: its pings run on the Node event loop. An event
 * loop blocked for longer than a third of the session timeout can cost the session; keep heavy work
 * (job code) out of the process that holds the session.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import Denque from 'denque';
import { OrreryError, toError, hasErrorCode, errorCode, isRetryable } from '../errors.js';
import { createEmitter, type Subscribable } from '../events.js';
import { forgetSocketScan } from '../child-stdio.js';
import type { Metrics } from '../metrics.js';
import { zkError } from './zk-errors.js';

const require = createRequire(import.meta.url);

/** Curator's connection states, plus the handle's own life. */
export type ConnectionState = 'CONNECTED' | 'SUSPENDED' | 'LOST' | 'RECONNECTED';

/** The lifecycle phase of a client handle. */
export type ClientPhase = 'idle' | 'connecting' | 'connected' | 'suspended' | 'lost' | 'closed';

/** ZooKeeper's node metadata. */
export interface ZkStat {
  czxid: number;
  mzxid: number;
  pzxid: number;
  ctime: number;
  mtime: number;
  version: number;
  cversion: number;
  aversion: number;
  /** Session id (hex) of the owner of an ephemeral node; `'0'` for a persistent node. */
  ephemeralOwner: string;
  dataLength: number;
  numChildren: number;
}

/** A fired one-shot watch. */
export interface WatchEvent {
  type: 'created' | 'deleted' | 'changed' | 'children';
  /** The path, relative to the client's root. */
  path: string;
}

/** Called once when a watch fires. */
export type Watcher = (event: WatchEvent) => void;

/** How a node is created. */
export type CreateMode = 'persistent' | 'ephemeral' | 'persistent-sequential' | 'ephemeral-sequential';

/** Events of a {@link ZkClient}. */
export interface ZkClientEvents {
  /**
   * Curator-style connection state change. `watchesLost`: no watch set before survived (a new
   * session, or the same one re-attached without its watches); a `session` event comes with it.
   */
  state: { state: ConnectionState; sessionId: string; newSession: boolean; watchesLost: boolean };
  /**
   * A session was established — the first one, or a new one after `LOST` — or the same session
   * was re-attached over a new handle without its watches (`reattached`: they were too many to
   * restore; its ephemeral nodes are still there). Either way no watch survives: recipes set theirs again.
   */
  session: { sessionId: string; previousSessionId: string | undefined; reattached: boolean };
  /** A problem the client handled by itself (for logs). */
  error: Error;
}

/**
 * Buckets of `orrery_zookeeper_operation_seconds`, in seconds: 1 ms to 10 s. A healthy ensemble
 * answers in a few ms; hundreds of ms mean a loaded server or a slow link; past a third of the
 * session timeout the session itself is at risk.
 */
export const ZK_OPERATION_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Options of {@link createZkClient}. */
export interface ZkClientOptions {
  /** `host:port[,host:port…]` of the ensemble. */
  connect: string;
  /** Chroot every path is relative to; created when missing. Default `/orrery`. */
  root?: string;
  /** Requested session timeout in ms (the server may adjust it). Default 10 000. */
  sessionTimeoutMs?: number;
  /** How long `start()` waits for a first session before it fails, in ms. Default 15 000. */
  connectTimeoutMs?: number;
  /** Attach to an existing session (tests use this to force an expiry from the server side). */
  session?: { clientId: string; password: string };
  /**
   * Digest credentials `user:password` (`ORRERY_ZK_AUTH`): authenticate every session with them and
   * create every node with Orrery's ACL (see the module header). Default: none (open ACL).
   */
  auth?: string;
  /** The most data a write may carry, in bytes. Default {@link ZK_NODE_MAX_BYTES} (tests of large nodes raise it). */
  maxDataBytes?: number;
  /**
   * Where to time every operation: the histogram `orrery_zookeeper_operation_seconds{operation}`
   * (buckets {@link ZK_OPERATION_BUCKETS}), from the request to its answer, errors included.
   * Default: not timed.
   */
  metrics?: Metrics;
  /**
   * The most requests this client has outstanding at once (default {@link ZK_MAX_IN_FLIGHT}); more
   * wait here, in order. ZooKeeper answers a session's requests in order, so without a bound a
   * burst (an executor handed 300 jobs at once starts 300 jobs' watches and latches) puts every
   * later request — the self-fence's liveness probe among them — behind all of it. {@link ZkClient.probe}
   * does not wait here.
   */
  maxInFlight?: number;
  /**
   * The server's `jute.maxbuffer`, in bytes: the largest request it takes. Past it, the watches a
   * reconnect would restore are not left to the C client (see the module comment). Default
   * {@link ZK_SERVER_MAX_BUFFER}, what Orrery's launchers set.
   */
  serverMaxBuffer?: number;
}

/** The default of {@link ZkClientOptions.maxInFlight}. */
export const ZK_MAX_IN_FLIGHT = 128;

/** One ACL entry, as ZooKeeper stores it. */
export interface ZkAcl {
  /** Bit set: read 1, write 2, create 4, delete 8, admin 16 (all: 31). */
  perms: number;
  scheme: string;
  /** For `digest`: `user:base64(sha1(user:password))`; for `world`: `anyone`. */
  id: string;
}

/** ZooKeeper's permission bits. */
export const ZK_PERMS = { read: 1, write: 2, create: 4, delete: 8, admin: 16, all: 31 } as const;

/** Parses digest credentials `user:password`; a `usage` error naming the rule otherwise. */
export function parseZkAuth(text: string, field = 'ORRERY_ZK_AUTH'): { user: string; password: string } {
  const colon = text.indexOf(':');
  const user = colon > 0 ? text.slice(0, colon) : '';
  const password = colon > 0 ? text.slice(colon + 1) : '';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(user) || password.length < 8 || password.length > 256) {
    throw new OrreryError('usage', `${field}: must be USER:PASSWORD — a user of letters, digits, '.', '_' or '-' (1 to 64) and a password of 8 to 256 characters`, {
      details: { issues: [{ field, rule: 'format', message: `${field}: must be USER:PASSWORD (user [A-Za-z0-9_.-]{1,64}, password 8 to 256 characters)` }] },
    });
  }
  return { user, password };
}

/** The ACL id ZooKeeper's digest scheme gives `user:password`: `user:base64(sha1(user:password))`. */
export function digestId(user: string, password: string): string {
  return `${user}:${createHash('sha1').update(`${user}:${password}`).digest('base64')}`;
}

/** Orrery's ACL for digest credentials: every permission for that identity, nothing for anyone else. */
export function orreryAcl(auth: string): ZkAcl[] {
  const { user, password } = parseZkAuth(auth);
  return [{ perms: ZK_PERMS.all, scheme: 'digest', id: digestId(user, password) }];
}

/** The resolved options. */
export interface ResolvedZkClientOptions {
  connect: string;
  root: string;
  sessionTimeoutMs: number;
  connectTimeoutMs: number;
  session: { clientId: string; password: string } | undefined;
  /** Digest credentials, if any (never logged). */
  auth: string | undefined;
  maxDataBytes: number;
  maxInFlight: number;
  serverMaxBuffer: number;
}

/** A ZooKeeper client handle; see the module header for its guarantees. */
export interface ZkClient extends Subscribable<ZkClientEvents> {
  readonly options: ResolvedZkClientOptions;
  /** The handle's phase. */
  readonly phase: ClientPhase;
  /** The current session id (hex), once connected. */
  readonly sessionId: string | undefined;
  /** The negotiated session timeout in ms (the requested one until connected). */
  readonly sessionTimeoutMs: number;
  /** Connects; resolves once the first session is established. */
  start(): Promise<void>;
  /** Closes the session (its ephemeral nodes go at once). Idempotent. */
  close(): Promise<void>;
  /** Resolves when the client is connected (now or later); rejects after `timeoutMs`. */
  whenConnected(timeoutMs?: number): Promise<void>;
  /** The current session's id and password, to attach a second handle to it. */
  sessionCredentials(): { clientId: string; password: string };

  create(path: string, data?: Buffer | string | null, mode?: CreateMode): Promise<string>;
  get(path: string, watcher?: Watcher): Promise<{ data: Buffer | null; stat: ZkStat }>;
  exists(path: string, watcher?: Watcher): Promise<ZkStat | null>;
  getChildren(path: string, watcher?: Watcher): Promise<string[]>;
  set(path: string, data: Buffer | string, version?: number): Promise<ZkStat>;
  delete(path: string, version?: number): Promise<void>;
  /** Creates `path` and its missing parents (persistent, empty); an existing node is fine. */
  mkdirp(path: string): Promise<void>;
  /** Deletes `path` and everything under it; a missing node is fine. */
  deleteRecursive(path: string): Promise<void>;
  /** Makes the connected server catch up with the leader for `path` before later reads. */
  sync(path: string): Promise<void>;
  /**
   * A cheap request (`exists /`) sent at once, ahead of the requests waiting for a slot (see
   * {@link ZkClientOptions.maxInFlight}): resolves when the server answered it — proof that it heard
   * this session at or after the call.
   */
  probe(): Promise<void>;
  /** The node's ACL and stat. */
  getAcl(path: string): Promise<{ acl: ZkAcl[]; stat: ZkStat }>;
  /**
   * Gives a node this client's ACL if it still has the one it was created with (ACL version 0) —
   * what `create` does for every node it makes when the client has `auth`; callers use it for a node
   * whose create answer was lost. A no-op without `auth`; `no-auth` when someone else set another ACL.
   */
  secure(path: string): Promise<void>;
  /** Sets the node's ACL (default: the ACL this client creates nodes with), if its ACL version is still `aclVersion` (-1: any). */
  setAcl(path: string, acl?: ZkAcl[], aclVersion?: number): Promise<void>;
  /** The ACL this client creates nodes with (the open ACL without `auth`). */
  readonly acl: readonly ZkAcl[];
  [Symbol.asyncDispose](): Promise<void>;
}

// The native module's surface that this file uses.
interface NativeHandle {
  /** The C++ object underneath; called directly (see `nativeOf`). */
  native: NativeCalls;
  client_id: string;
  client_password: string;
  timeout: number;
  on(event: string, listener: (...args: unknown[]) => void): void;
  removeAllListeners(): void;
  init(config: Record<string, unknown>): void;
  close(): void;
  a_create(path: string, data: Buffer | null, flags: number, cb: (rc: number, error: string, path: string) => void): number;
  a_exists(path: string, watch: boolean, cb: (rc: number, error: string, stat: ZkStat) => void): number;
  aw_exists(path: string, w: NativeWatcher, cb: (rc: number, error: string, stat: ZkStat) => void): number;
  a_get(path: string, watch: boolean, cb: (rc: number, error: string, stat: ZkStat, data: Buffer | null) => void): number;
  aw_get(path: string, w: NativeWatcher, cb: (rc: number, error: string, stat: ZkStat, data: Buffer | null) => void): number;
  a_get_children(path: string, watch: boolean, cb: (rc: number, error: string, children: string[]) => void): number;
  aw_get_children(path: string, w: NativeWatcher, cb: (rc: number, error: string, children: string[]) => void): number;
  a_set(path: string, data: Buffer, version: number, cb: (rc: number, error: string, stat: ZkStat) => void): number;
  a_delete_(path: string, version: number, cb: (rc: number, error: string) => void): number;
  a_sync(path: string, cb: (rc: number, error: string) => void): number;
  a_get_acl(path: string, cb: (rc: number, error: string, acl: Array<{ perms: number; scheme: string; auth: string }> | null, stat: ZkStat | null) => void): number;
  a_set_acl(path: string, version: number, acl: Array<{ perm: number; scheme: string; auth: string }>, cb: (rc: number, error: string) => void): number;
  add_auth(scheme: string, auth: string, cb: (rc: number, error: string) => void): number;
}
/** The C++ object's calls (the same signatures as the wrapper's `a_*`/`aw_*`). */
type NativeCalls = Pick<NativeHandle, 'a_create' | 'a_exists' | 'aw_exists' | 'a_get' | 'aw_get' | 'a_get_children' | 'aw_get_children' | 'a_set' | 'a_delete_' | 'a_sync' | 'a_get_acl' | 'a_set_acl' | 'add_auth'>;
type NativeWatcher = (type: number, state: number, path: string) => void;
interface NativeModule {
  ZooKeeper: new () => NativeHandle;
  constants: Record<string, number>;
}

let nativeModule: NativeModule | undefined;
function native(): NativeModule {
  if (!nativeModule) {
    const Promised = require('zookeeper') as { ZooKeeper: new () => NativeHandle; constants: Record<string, number> };
    nativeModule = { ZooKeeper: Promised.ZooKeeper, constants: Promised.constants };
  }
  return nativeModule;
}

/**
 * The largest node data Orrery writes, in bytes (512 KiB): half of what a ZooKeeper server accepts
 * in one request by default ({@link ZK_SERVER_MAX_BUFFER}), so every Orrery write fits with room for
 * its path and framing. This client refuses a larger write itself, with a clear error, before
 * anything is sent. Job configs have their own, smaller limit (`JOB_CONFIG_MAX_BYTES`).
 */
export const ZK_NODE_MAX_BYTES = 512 * 1024;
/**
 * The server's `jute.maxbuffer` Orrery expects and its launchers set: ZooKeeper's default, 1 MiB − 1.
 * The client has no such limit: it reads whatever the server sends (see `response_counter_limit`).
 */
export const ZK_SERVER_MAX_BUFFER = 1024 * 1024 - 1;

/**
 * The `zookeeper` package closes a handle — reporting an expired session — once its C client has
 * returned "nothing complete yet" this many times in a row (its default is 10). A large reply (a
 * big node, 20,000 children) arriving in pieces over a slow link does exactly that, so a slow link
 * could cost a healthy session. Dead links are detected by the session timeout instead: the counter
 * is set out of reach.
 */
const RESPONSE_COUNTER_LIMIT = 2_147_483_647;

/** The native result codes this module acts on. */
const CONNECTION_LOSS = -4;
const NO_NODE = -101;

/** How many times setting a new node's ACL is tried across connection losses. */
const SECURE_TRIES = 3;

/** True when two ACLs hold the same entries (in any order). */
function sameAcl(a: readonly ZkAcl[], b: readonly ZkAcl[]): boolean {
  const key = (x: ZkAcl): string => `${x.perms}|${x.scheme}|${x.id}`;
  return a.length === b.length && a.map(key).sort().join('\n') === b.map(key).sort().join('\n');
}

const CREATE_FLAGS: Record<CreateMode, number> = {
  persistent: 0,
  ephemeral: 1,
  'persistent-sequential': 2,
  'ephemeral-sequential': 3,
};

const WATCH_TYPES: Record<number, WatchEvent['type']> = { 1: 'created', 2: 'deleted', 3: 'changed', 4: 'children' };

/** Normalises a chroot: leading slash, no trailing slash, `'/'` for none. */
function normaliseRoot(root: string): string {
  if (!root.startsWith('/')) throw new OrreryError('bad-arguments', `ZooKeeper root '${root}' must start with '/'`);
  const trimmed = root.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}

function assertPath(path: string): void {
  if (!path.startsWith('/') || (path.length > 1 && path.endsWith('/')) || path.includes('//')) {
    throw new OrreryError('bad-arguments', `ZooKeeper path '${path}' must be absolute, with no empty segment and no trailing slash`);
  }
}

/** Resolves {@link ZkClientOptions}. */
export function resolveZkClientOptions(options: ZkClientOptions): ResolvedZkClientOptions {
  if (options.auth !== undefined) parseZkAuth(options.auth, 'auth');
  if (options.maxInFlight !== undefined && !(Number.isInteger(options.maxInFlight) && options.maxInFlight >= 1)) {
    throw new OrreryError('usage', `maxInFlight must be a whole number of at least 1 (got ${options.maxInFlight})`);
  }
  return Object.freeze({
    connect: options.connect,
    root: normaliseRoot(options.root ?? '/orrery'),
    sessionTimeoutMs: options.sessionTimeoutMs ?? 10_000,
    connectTimeoutMs: options.connectTimeoutMs ?? 15_000,
    session: options.session,
    auth: options.auth,
    maxDataBytes: options.maxDataBytes ?? ZK_NODE_MAX_BYTES,
    maxInFlight: options.maxInFlight ?? ZK_MAX_IN_FLIGHT,
    serverMaxBuffer: options.serverMaxBuffer ?? ZK_SERVER_MAX_BUFFER,
  });
}

/** Creates a client; call `start()` to connect. */
export function createZkClient(options: ZkClientOptions): ZkClient {
  const opts = resolveZkClientOptions(options);
  const acl: readonly ZkAcl[] = Object.freeze(opts.auth ? orreryAcl(opts.auth) : [{ perms: ZK_PERMS.all, scheme: 'world', id: 'anyone' }]);
  const nativeAcl = acl.map((a) => ({ perm: a.perms, scheme: a.scheme, auth: a.id }));
  const emitter = createEmitter<ZkClientEvents>();
  const latency = options.metrics?.histogram('orrery_zookeeper_operation_seconds', 'ZooKeeper operations from request to answer (errors included), by operation', ZK_OPERATION_BUCKETS, ['operation']);
  let phase: ClientPhase = 'idle';
  let handle: NativeHandle | undefined;
  // Requests outstanding on the current handle, and those waiting for a slot (see maxInFlight).
  // A handle replaced or closed answers its outstanding requests with errors: its slots are
  // forgotten at once (`slotEpoch`), so a lost answer can never leave a slot taken.
  let inFlight = 0;
  let slotEpoch = 0;
  // (A double-ended queue: Array#shift moves every element left, and a burst queues thousands —
  // an executor handed 3,000 jobs spent 6 % of its CPU shifting this list.)
  const waitingForSlot = new Denque<() => void>();
  const nextWaiting = (): void => {
    while (inFlight < opts.maxInFlight && waitingForSlot.length > 0) waitingForSlot.shift()!();
  };
  /** A new handle, or none: the slots start over and the waiting requests go (or fail) now. */
  const resetSlots = (): void => {
    slotEpoch += 1;
    inFlight = 0;
    nextWaiting();
  };
  let sessionId: string | undefined;
  let everConnected = false;
  let lostTimer: NodeJS.Timeout | undefined;
  let lostDeadline: number | undefined;
  let reopenTimer: NodeJS.Timeout | undefined;
  let reopenDelayMs = 0;
  let startPromise: Promise<void> | undefined;
  let closePromise: Promise<void> | undefined;
  // Listeners waiting for the next connected moment.
  const connectedWaiters = new Set<() => void>();

  const abs = (path: string): string => {
    assertPath(path);
    if (opts.root === '/') return path;
    return path === '/' ? opts.root : opts.root + path;
  };
  const rel = (path: string): string => {
    if (opts.root === '/') return path;
    if (path === opts.root) return '/';
    return path.startsWith(opts.root + '/') ? path.slice(opts.root.length) : path;
  };

  function clearLostTimer(): void {
    if (lostTimer) clearTimeout(lostTimer);
    lostTimer = undefined;
  }

  function setState(state: ConnectionState, newSession: boolean, watchesLost = newSession): void {
    forgetSocketScan();
    emitter.emit('state', { state, sessionId: sessionId ?? '', newSession, watchesLost });
  }

  // The watches the current handle's C client holds — what it would restore, in one SetWatches
  // request, on a reconnect: by table (data, exist, child), each path with how many of this
  // client's watchers are set on it; and their size in that request (a length and the path each).
  type WatchTable = 'data' | 'exist' | 'child';
  let watchTables: Record<WatchTable, Map<string, number>> = { data: new Map(), exist: new Map(), child: new Map() };
  let watchBytes = 0;
  let watchEpoch = 0;
  /** SetWatches' own bytes: the request header (xid, type), the last zxid, and three vector lengths. */
  const SET_WATCHES_OVERHEAD = 4 + 4 + 8 + 3 * 4;

  function forgetWatches(): void {
    watchTables = { data: new Map(), exist: new Map(), child: new Map() };
    watchBytes = 0;
    watchEpoch += 1;
  }

  /** Counts a watcher the server has set (its request succeeded); returns what uncounts it. */
  function countWatch(table: WatchTable, absolutePath: string): () => void {
    const epoch = watchEpoch;
    const tableNow = watchTables[table];
    const n = tableNow.get(absolutePath) ?? 0;
    tableNow.set(absolutePath, n + 1);
    if (n === 0) watchBytes += 4 + Buffer.byteLength(absolutePath);
    let counted = true;
    return () => {
      if (!counted || epoch !== watchEpoch) return;
      counted = false;
      const m = tableNow.get(absolutePath) ?? 0;
      if (m > 1) {
        tableNow.set(absolutePath, m - 1);
        return;
      }
      tableNow.delete(absolutePath);
      watchBytes -= 4 + Buffer.byteLength(absolutePath);
    };
  }

  /** Whether a reconnect would send more than the server takes in one request. */
  const tooManyWatchesToRestore = (): boolean => SET_WATCHES_OVERHEAD + watchBytes > opts.serverMaxBuffer;

  /** The link under `h` dropped (the session may live): SUSPENDED, and LOST a session timeout later. */
  function suspend(h: NativeHandle): void {
    phase = 'suspended';
    setState('SUSPENDED', false);
    // Curator's rule: a link down for a whole session timeout means the session is lost.
    armLostTimer(h.timeout > 0 ? h.timeout : opts.sessionTimeoutMs);
  }

  function armLostTimer(ms: number): void {
    clearLostTimer();
    lostDeadline = Date.now() + ms;
    lostTimer = setTimeout(() => {
      if (phase !== 'suspended' || !handle) return;
      loseSession(handle);
    }, Math.max(0, ms));
    lostTimer.unref?.();
  }

  /**
   * The link under `h` dropped while its watches are more than one request can restore (see the
   * module comment): rather than let the C client reconnect — the server would refuse its
   * SetWatches and drop the link again, for ever — `h` is closed and a new handle attached to the
   * same session, with no watch to restore. Closing `h` sends nothing the server acts on: it is not
   * connected, or (connected again meanwhile) its SetWatches, first in its queue, ends the link
   * before the server reads anything after it.
   */
  function reattach(h: NativeHandle): void {
    if (handle !== h || phase === 'closed' || phase === 'lost') return;
    let credentials: { clientId: string; password: string };
    try {
      credentials = { clientId: h.client_id, password: h.client_password };
    } catch {
      loseSession(h);
      return;
    }
    const watches = watchTables.data.size + watchTables.exist.size + watchTables.child.size;
    emitter.emit('error', new OrreryError('unavailable', `the ZooKeeper link dropped under ${watches} watched paths (${SET_WATCHES_OVERHEAD + watchBytes} bytes to restore, more than the ${opts.serverMaxBuffer} the server takes in one request): reconnecting in the same session without them, to set them again`, {
      details: { watches, bytes: SET_WATCHES_OVERHEAD + watchBytes, serverMaxBuffer: opts.serverMaxBuffer },
    }));
    const remaining = phase === 'suspended' && lostDeadline !== undefined ? lostDeadline - Date.now() : undefined;
    if (phase !== 'suspended') suspend(h);
    handle = undefined;
    try {
      h.close();
    } catch {
      // already closed by the native side
    }
    openHandle(credentials, true);
    if (remaining !== undefined) armLostTimer(remaining);
  }

  function openHandle(session?: { clientId: string; password: string }, reattached = false): void {
    const { ZooKeeper } = native();
    forgetSocketScan();
    const h = new ZooKeeper();
    handle = h;
    resetSlots();
    forgetWatches();
    let connectedOnce = false;
    h.on('connect', () => {
      if (handle !== h) return;
      clearLostTimer();
      const previous = sessionId;
      const id = h.client_id;
      const newSession = !connectedOnce;
      connectedOnce = true;
      sessionId = id;
      const wasSuspendedOrLost = phase === 'suspended' || phase === 'lost';
      phase = 'connected';
      reopenDelayMs = 0;
      if (newSession) {
        // A new session: make sure the chroot exists before anyone uses it (an attached session
        // already made it, and must not spend its moment on writes). A re-attached one sends its
        // credentials again (they belong to the connection), and is the same session: no watch
        // survived, but its ephemeral nodes did.
        const ready = reattached ? authenticate(h) : session ? Promise.resolve() : authenticate(h).then(() => ensureRoot(h));
        void ready.then(
          () => {
            if (handle !== h) return;
            if (!everConnected) {
              everConnected = true;
              setState('CONNECTED', true);
            } else {
              setState('RECONNECTED', !reattached, true);
            }
            emitter.emit('session', { sessionId: id, previousSessionId: previous, reattached });
            for (const w of [...connectedWaiters]) w();
          },
          (error) => emitter.emit('error', toError(error)),
        );
      } else if (wasSuspendedOrLost) {
        setState('RECONNECTED', false);
        for (const w of [...connectedWaiters]) w();
      }
    });
    h.on('connecting', () => {
      if (handle !== h || phase !== 'connected') return;
      suspend(h);
      if (tooManyWatchesToRestore()) reattach(h);
    });
    h.on('close', () => {
      // The native handle ended without our asking: the server expired the session.
      if (handle !== h || phase === 'closed') return;
      loseSession(h);
    });
    const config: Record<string, unknown> = {
      connect: opts.connect,
      timeout: opts.sessionTimeoutMs,
      debug_level: 0,
      host_order_deterministic: false,
      data_as_buffer: true,
      response_counter_limit: RESPONSE_COUNTER_LIMIT,
    };
    if (session) {
      config.client_id = session.clientId;
      config.client_password = session.password;
    }
    h.init(config);
  }

  function loseSession(h: NativeHandle): void {
    clearLostTimer();
    if (phase === 'closed') return;
    const wasLost = phase === 'lost';
    phase = 'lost';
    handle = undefined;
    resetSlots();
    try {
      h.close();
    } catch {
      // already closed by the native side
    }
    if (!wasLost) setState('LOST', false);
    // A new session, without restarting the process — opened on a later turn of the event loop
    // (a handle opened while the old one is still closing can die at once), and with a growing
    // pause when new handles keep dying before they connect.
    scheduleReopen();
  }

  function scheduleReopen(): void {
    if (reopenTimer || phase === 'closed') return;
    const delay = reopenDelayMs;
    reopenDelayMs = Math.min(2000, Math.max(50, reopenDelayMs * 2));
    reopenTimer = setTimeout(() => {
      reopenTimer = undefined;
      if (phase === 'closed' || handle) return;
      openHandle();
      phase = 'lost';
    }, delay);
  }

  /** Sends the digest credentials on a new session (the C client re-sends them on every reconnect). */
  function authenticate(h: NativeHandle): Promise<void> {
    const auth = opts.auth;
    if (!auth) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const rc = h.native.add_auth('digest', auth, (code) => (code === 0 ? resolve() : reject(zkError(code, 'authenticate', '/'))));
      if (rc !== 0) reject(zkError(rc, 'authenticate', '/'));
    });
  }

  async function ensureRoot(h: NativeHandle): Promise<void> {
    if (opts.root === '/') return;
    const parts = opts.root.split('/').filter(Boolean);
    let path = '';
    for (const part of parts) {
      path += '/' + part;
      const target = path;
      const created = await new Promise<boolean>((resolve, reject) => {
        const rc = h.native.a_create(target, null, 0, (code) => {
          if (code === 0 || code === -110) resolve(code === 0);
          else reject(zkError(code, 'create', target));
        });
        if (rc !== 0) reject(zkError(rc, 'create', target));
      });
      if (created && opts.auth) {
        await new Promise<void>((resolve, reject) => {
          const rc = h.native.a_set_acl(target, 0, nativeAcl, (code) => (code === 0 ? resolve() : reject(zkError(code, 'setAcl', target))));
          if (rc !== 0) reject(zkError(rc, 'setAcl', target));
        });
      }
    }
  }

  function current(operation: string, path: string): NativeHandle {
    if (phase === 'closed') throw new OrreryError('closed', `ZooKeeper ${operation} ${path}: the client is closed`);
    if (!handle) throw new OrreryError('not-connected', `ZooKeeper ${operation} ${path}: no session`);
    return handle;
  }

  /** Sends a request when a slot is free (at once if `urgent`); see {@link ZkClientOptions.maxInFlight}. */
  function call<T>(operation: string, path: string, invoke: (h: NativeCalls, done: (rc: number, value?: T) => void) => number, urgent = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const send = (): void => {
        let owner: NativeHandle;
        let h: NativeCalls;
        try {
          // The package's JS wrapper formats every argument with util.inspect (for a debug log) on
          // every call: call the C++ object underneath instead.
          owner = current(operation, path);
          h = owner.native;
        } catch (error) {
          reject(error);
          return;
        }
        const epoch = slotEpoch;
        inFlight += 1;
        let freed = false;
        const free = (): void => {
          if (freed) return;
          freed = true;
          if (epoch !== slotEpoch) return;
          inFlight -= 1;
          nextWaiting();
        };
        const started = latency ? performance.now() : 0;
        const rc = invoke(h, (code, value) => {
          latency?.observe({ operation }, (performance.now() - started) / 1000);
          free();
          // The link dropped without a word from the C client (it can reconnect in silence): with
          // too many watches to restore, its reconnections are refused — take over (see reattach).
          if (code === CONNECTION_LOSS && handle === owner && phase === 'connected' && tooManyWatchesToRestore()) reattach(owner);
          if (code === 0) resolve(value as T);
          else reject(zkError(code, operation, path));
        });
        if (rc !== 0) {
          free();
          reject(zkError(rc, operation, path));
        }
      };
      if (urgent || (inFlight < opts.maxInFlight && waitingForSlot.length === 0)) send();
      else waitingForSlot.push(send);
    });
  }

  /**
   * The native form of `watcher`, and `set(table)`, to call once its request succeeded: the server
   * has set it, in that table of the C client (counted until it fires; see {@link countWatch}).
   */
  function wrapWatcher(watcher: Watcher, absolutePath: string): { native: NativeWatcher; set(table: WatchTable): void } {
    let fired = false;
    let uncount: (() => void) | undefined;
    return {
      native: (type, _state, path) => {
        // Session events are delivered to every watcher by the C client; they are not data events.
        const kind = WATCH_TYPES[type];
        if (!kind || fired) return;
        fired = true;
        uncount?.();
        try {
          watcher({ type: kind, path: rel(path) });
        } catch (error) {
          emitter.emit('error', toError(error));
        }
      },
      set(table) {
        if (!fired && !uncount) uncount = countWatch(table, absolutePath);
      },
    };
  }

  const toBuffer = (data: Buffer | string | null | undefined): Buffer | null =>
    data === null || data === undefined ? null : Buffer.isBuffer(data) ? data : Buffer.from(data, 'utf8');
  const checkSize = (operation: string, path: string, data: Buffer | null): void => {
    if (data && data.length > opts.maxDataBytes) {
      throw new OrreryError('bad-arguments', `ZooKeeper ${operation} ${path}: ${data.length} bytes of data is more than the ${opts.maxDataBytes} bytes a node may hold`, {
        details: { path, bytes: data.length, limit: opts.maxDataBytes },
      });
    }
  };

  const client: ZkClient = {
    options: opts,
    get phase() {
      return phase;
    },
    get sessionId() {
      return sessionId;
    },
    get sessionTimeoutMs() {
      return handle && handle.timeout > 0 ? handle.timeout : opts.sessionTimeoutMs;
    },
    on: emitter.on,

    start() {
      if (startPromise) return startPromise;
      if (phase === 'closed') return Promise.reject(new OrreryError('closed', 'the ZooKeeper client is closed'));
      phase = 'connecting';
      startPromise = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          off();
          const error = new OrreryError(
            'connection-loss',
            `could not connect to ZooKeeper at ${opts.connect} within ${opts.connectTimeoutMs} ms`,
            { details: { connect: opts.connect } },
          );
          void client.close().finally(() => reject(error));
        }, opts.connectTimeoutMs);
        const off = emitter.on('session', () => {
          clearTimeout(timer);
          off();
          resolve();
        });
        try {
          openHandle(opts.session);
        } catch (error) {
          clearTimeout(timer);
          off();
          reject(toError(error));
        }
      });
      return startPromise;
    },

    close() {
      if (closePromise) return closePromise;
      clearLostTimer();
      if (reopenTimer) clearTimeout(reopenTimer);
      reopenTimer = undefined;
      const h = handle;
      phase = 'closed';
      handle = undefined;
      resetSlots();
      connectedWaiters.clear();
      closePromise = new Promise<void>((resolve) => {
        if (!h) {
          resolve();
          return;
        }
        try {
          h.close();
        } catch {
          // already closed
        }
        // The native close is synchronous for the session; give its socket a tick to finish.
        setImmediate(resolve);
      }).finally(() => emitter.clear());
      return closePromise;
    },

    whenConnected(timeoutMs = opts.connectTimeoutMs) {
      if (phase === 'connected') return Promise.resolve();
      if (phase === 'closed') return Promise.reject(new OrreryError('closed', 'the ZooKeeper client is closed'));
      return new Promise<void>((resolve, reject) => {
        const done = (): void => {
          clearTimeout(timer);
          connectedWaiters.delete(done);
          resolve();
        };
        const timer = setTimeout(() => {
          connectedWaiters.delete(done);
          reject(new OrreryError('timeout', `not connected to ZooKeeper at ${opts.connect} within ${timeoutMs} ms`));
        }, timeoutMs);
        connectedWaiters.add(done);
      });
    },

    sessionCredentials() {
      const h = current('session', '/');
      return { clientId: h.client_id, password: h.client_password };
    },

    async create(path, data = null, mode = 'persistent') {
      const p = abs(path);
      const buffer = toBuffer(data);
      checkSize('create', path, buffer);
      let made: string;
      try {
        made = await call<string>('create', path, (h, done) =>
          h.a_create(p, buffer, CREATE_FLAGS[mode], (rc, _e, name) => done(rc, rc === 0 ? name : undefined)),
        );
      } catch (error) {
        // A node left with the open ACL (its creator was cut off before it could set Orrery's) is
        // secured by whoever meets it next.
        if (opts.auth && hasErrorCode(error, 'node-exists')) await client.secure(path).catch(() => undefined);
        throw error;
      }
      if (!opts.auth) return rel(made);
      await client.secure(rel(made));
      return rel(made);
    },

    async secure(path) {
      if (!opts.auth) return;
      // The native client creates nodes with the open ACL only: Orrery's is set by a second request,
      // from ACL version 0 (never over an ACL someone set since).
      for (let tries = 1; ; tries += 1) {
        try {
          await client.setAcl(path, acl as ZkAcl[], 0);
          return;
        } catch (error) {
          if (hasErrorCode(error, 'no-node')) return;
          if (hasErrorCode(error, 'bad-version')) {
            // Its ACL changed since it was made: fine when it is Orrery's (another Orrery client got
            // there first); anything else is not ours to keep.
            const current = await client.getAcl(path);
            if (sameAcl(current.acl, acl)) return;
            await client.delete(path).catch(() => undefined); // best effort: the error says what happened
            throw new OrreryError('no-auth', `ZooKeeper create ${path}: someone else changed the new node's ACL before Orrery could set its own; the node was removed`, { details: { path } });
          }
          // Connection trouble: once connected, try again (the ACL version tells whether it went through).
          if (!isRetryable(error) || tries >= SECURE_TRIES) throw error;
          await client.whenConnected().catch(() => undefined);
        }
      }
    },

    async getAcl(path) {
      const p = abs(path);
      return call<{ acl: ZkAcl[]; stat: ZkStat }>('getAcl', path, (h, done) =>
        h.a_get_acl(p, (rc, _e, list, stat) => done(rc, rc === 0 ? { acl: (list ?? []).map((a) => ({ perms: a.perms, scheme: a.scheme, id: a.auth })), stat: stat! } : undefined)),
      );
    },

    setAcl(path, list = acl as ZkAcl[], aclVersion = -1) {
      const p = abs(path);
      const entries = list.map((a) => ({ perm: a.perms, scheme: a.scheme, auth: a.id }));
      return call<void>('setAcl', path, (h, done) => h.a_set_acl(p, aclVersion, entries, (rc) => done(rc)));
    },

    acl,

    get(path, watcher) {
      const p = abs(path);
      return call('get', path, (h, done) => {
        const w = watcher ? wrapWatcher(watcher, p) : undefined;
        const cb = (rc: number, _e: string, stat: ZkStat, data: Buffer | null): void => {
          if (rc === 0) w?.set('data');
          done(rc, rc === 0 ? { data: data && data.length > 0 ? data : null, stat } : undefined);
        };
        return w ? h.aw_get(p, w.native, cb) : h.a_get(p, false, cb);
      });
    },

    async exists(path, watcher) {
      const p = abs(path);
      try {
        return await call<ZkStat>('exists', path, (h, done) => {
          const w = watcher ? wrapWatcher(watcher, p) : undefined;
          const cb = (rc: number, _e: string, stat: ZkStat): void => {
            if (rc === 0) w?.set('data');
            else if (rc === NO_NODE) w?.set('exist');
            done(rc, stat);
          };
          return w ? h.aw_exists(p, w.native, cb) : h.a_exists(p, false, cb);
        });
      } catch (error) {
        // A watch set by exists on a missing node stays set (it fires on creation).
        if (hasErrorCode(error, 'no-node')) return null;
        throw error;
      }
    },

    getChildren(path, watcher) {
      const p = abs(path);
      return call<string[]>('getChildren', path, (h, done) => {
        const w = watcher ? wrapWatcher(watcher, p) : undefined;
        const cb = (rc: number, _e: string, children: string[]): void => {
          if (rc === 0) w?.set('child');
          done(rc, rc === 0 ? [...children].sort() : undefined);
        };
        return w ? h.aw_get_children(p, w.native, cb) : h.a_get_children(p, false, cb);
      });
    },

    set(path, data, version = -1) {
      const p = abs(path);
      const buffer = toBuffer(data) ?? Buffer.alloc(0);
      try {
        checkSize('set', path, buffer);
      } catch (error) {
        return Promise.reject(error);
      }
      return call<ZkStat>('set', path, (h, done) =>
        h.a_set(p, buffer, version, (rc, _e, stat) => done(rc, stat)),
      );
    },

    delete(path, version = -1) {
      const p = abs(path);
      return call<void>('delete', path, (h, done) => h.a_delete_(p, version, (rc) => done(rc)));
    },

    sync(path) {
      const p = abs(path);
      return call<void>('sync', path, (h, done) => h.a_sync(p, (rc) => done(rc)));
    },

    async probe() {
      const p = abs('/');
      await call<ZkStat>('exists', '/', (h, done) => h.a_exists(p, false, (rc: number, _e: string, stat: ZkStat) => done(rc, stat)), true).catch((error: unknown) => {
        if (!hasErrorCode(error, 'no-node')) throw error; // an answer all the same
      });
    },

    async mkdirp(path) {
      assertPath(path);
      const parts = path.split('/').filter(Boolean);
      let current = '';
      for (const part of parts) {
        current += '/' + part;
        try {
          await client.create(current, null, 'persistent');
        } catch (error) {
          if (!hasErrorCode(error, 'node-exists')) throw error;
        }
      }
    },

    async deleteRecursive(path) {
      assertPath(path);
      // Children first; retry when a writer adds a child between our listing and our delete.
      for (let attempt = 0; attempt < 10; attempt += 1) {
        let children: string[];
        try {
          children = await client.getChildren(path);
        } catch (error) {
          if (hasErrorCode(error, 'no-node')) return;
          throw error;
        }
        for (const child of children) {
          await client.deleteRecursive(path === '/' ? `/${child}` : `${path}/${child}`);
        }
        if (path === '/') return;
        try {
          await client.delete(path);
          return;
        } catch (error) {
          const code = errorCode(error);
          if (code === 'no-node') return;
          if (code !== 'not-empty') throw error;
        }
      }
      throw new OrreryError('not-empty', `could not delete ${path}: children keep being added`);
    },

    [Symbol.asyncDispose]() {
      return client.close();
    },
  };
  return client;
}
