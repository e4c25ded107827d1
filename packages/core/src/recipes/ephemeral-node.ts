/**
 * An ephemeral node that follows its owner across sessions (Curator's PersistentNode, ephemeral mode).
 *
 * Guarantees:
 * - While the client has a session, the node exists with the latest data given (`update`), owned by
 *   that session. After a new session it is re-created; if it is deleted by someone else, it is
 *   re-created (after `recreateDelayMs`, so that a recursive delete of its parent can finish).
 * - A node at the path owned by **another live session** is never overwritten: with `conflict:
 *   'wait'` (default) the recipe waits for it to go (an old session of ours that has not expired
 *   yet, say), emitting `conflict`; with `conflict: 'fail'`, `start()` rejects with `already-exists`.
 * - `close()` deletes the node (only if this session owns it) and stops re-creating it. Idempotent.
 *
 * Not guaranteed: that the node exists between a connection loss and the next session — ephemeral
 * nodes die with their session by design.
 */
import { OrreryError, toError, hasErrorCode, isRetryable } from '../errors.js';
import { createEmitter, type Subscribable } from '../events.js';
import { createSerialTask } from '../serial-task.js';
import { encodeJson } from '../json.js';
import type { WatchEvent, ZkClient } from '../zk/client.js';

/** Events of an {@link EphemeralNode}. */
export interface EphemeralNodeEvents {
  /** The node exists in the current session (created, re-created, or found ours). */
  'node:created': { path: string; sessionId: string };
  /** The path is held by another session. */
  'node:conflict': { path: string; owner: string };
  error: Error;
}

/** Options of {@link createEphemeralNode}. */
export interface EphemeralNodeOptions {
  /** What to do when another live session holds the path. Default `wait`. */
  conflict?: 'wait' | 'fail';
  /**
   * Create the parent path when it is missing (default true). False: a missing parent is an
   * `error` event (`no-node`) and nothing is created — for a node inside something another process
   * may delete on purpose (an executor's presence inside its namespace: re-creating the parents
   * would bring a deleted namespace back as an empty, broken one).
   */
  createParent?: boolean;
  /**
   * How long to wait before re-creating the node after someone else deleted it (default 200 ms).
   * A recursive delete of the parent (`orrery ns delete --force`) deletes the child first and the
   * parent next; re-created at once, the child can win that race every round and the delete gives
   * up. Not applied to a new session or to another session's node going away.
   */
  recreateDelayMs?: number;
}

/** A handle on an ephemeral node. */
export interface EphemeralNode extends Subscribable<EphemeralNodeEvents> {
  readonly path: string;
  /** Creates the node; resolves once it exists in this session. */
  start(): Promise<void>;
  /** Replaces the node's data (JSON) now and for every re-creation. */
  update(data: unknown): Promise<void>;
  /** Deletes the node and stops following it. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Creates the recipe; call `start()`. */
export function createEphemeralNode(zk: ZkClient, path: string, data: unknown, options: EphemeralNodeOptions = {}): EphemeralNode {
  const conflictMode = options.conflict ?? 'wait';
  const createParent = options.createParent ?? true;
  const recreateDelayMs = options.recreateDelayMs ?? 200;
  const emitter = createEmitter<EphemeralNodeEvents>();
  let payload = encodeJson(data);
  let closed = false;
  let started: Promise<void> | undefined;
  let firstDone: { resolve: () => void; reject: (e: Error) => void } | undefined;
  const offs: Array<() => void> = [];
  /** Whether the node, as last seen, was ours (its deletion is then someone else's doing). */
  let ours = false;
  let recreateTimer: NodeJS.Timeout | undefined;

  const parent = path.slice(0, path.lastIndexOf('/')) || '/';

  async function ensureOnce(): Promise<void> {
    if (closed || zk.phase === 'closed') return;
    if (createParent) await zk.mkdirp(parent);
    try {
      await zk.create(path, payload, 'ephemeral');
    } catch (error) {
      if (hasErrorCode(error, 'no-node')) throw new OrreryError('no-node', `${parent} is gone: ${path} is not created again`, { details: { path, parent } });
      if (!hasErrorCode(error, 'node-exists')) throw error;
      const read = await zk.get(path, onNodeEvent).catch((e: unknown) => {
        if (hasErrorCode(e, 'no-node')) return undefined;
        throw e;
      });
      if (!read) {
        ensure(); // gone between our create and our look: try again
        return;
      }
      const { stat } = read;
      if (stat.ephemeralOwner !== zk.sessionId) {
        ours = false;
        emitter.emit('node:conflict', { path, owner: stat.ephemeralOwner });
        if (conflictMode === 'fail') {
          throw new OrreryError('already-exists', `${path} is held by another live ZooKeeper session (0x${stat.ephemeralOwner})`, {
            details: { path, owner: stat.ephemeralOwner },
          });
        }
        return; // the watch set above calls us again when it goes
      }
      // Ours (a create whose answer was lost, a restart of this recipe, or our own update seen by
      // the watch): make the data current — only if it is not, or every write would wake the watch
      // that asks for the next one.
      if (!read.data || !read.data.equals(payload)) await zk.set(path, payload);
      ours = true;
      emitter.emit('node:created', { path, sessionId: zk.sessionId ?? '' });
      firstDone?.resolve();
      return;
    }
    // Watch our own node so that a deletion by someone else re-creates it.
    ours = true;
    await zk.exists(path, onNodeEvent);
    emitter.emit('node:created', { path, sessionId: zk.sessionId ?? '' });
    firstDone?.resolve();
  }

  function onNodeEvent(event: WatchEvent): void {
    if (closed) return;
    if (event.type !== 'deleted' || !ours || recreateDelayMs <= 0) {
      ensure();
      return;
    }
    ours = false;
    clearTimeout(recreateTimer);
    recreateTimer = setTimeout(ensure, recreateDelayMs);
    recreateTimer.unref();
  }

  // One ensure pass at a time; an event during a pass asks for one more.
  const ensurer = createSerialTask(async () => {
    try {
      await ensureOnce();
    } catch (error) {
      const e = toError(error);
      if (hasErrorCode(e, 'already-exists')) {
        // start() fails: the recipe stops following the path (a later conflict, in a new session,
        // waits instead: the watch set on the holder's node calls us again when it goes).
        if (firstDone) {
          closed = true;
          firstDone.reject(e);
        }
        return;
      }
      // Connection trouble: the next session or reconnect calls us again.
      if (!isRetryable(e)) emitter.emit('error', e);
    }
  }, () => !closed);
  const ensure = (): void => {
    if (!closed) ensurer.trigger();
  };

  const node: EphemeralNode = {
    path,
    on: emitter.on,
    start() {
      if (started) return started;
      started = new Promise<void>((resolve, reject) => {
        firstDone = {
          resolve: () => { firstDone = undefined; resolve(); },
          reject: (e) => { firstDone = undefined; reject(e); },
        };
      });
      offs.push(zk.on('session', () => ensure()));
      offs.push(zk.on('state', (s) => { if (s.state === 'RECONNECTED' && !s.watchesLost) ensure(); }));
      ensure();
      return started;
    },
    async update(data) {
      payload = encodeJson(data);
      if (closed) return;
      try {
        const stat = await zk.exists(path);
        if (stat && stat.ephemeralOwner === zk.sessionId) await zk.set(path, payload, stat.version);
      } catch (error) {
        // A conflict or a lost connection: the next ensure writes the new payload.
        if (!isRetryable(error) && !hasErrorCode(error, 'bad-version')) throw error;
        ensure();
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(recreateTimer);
      for (const off of offs.splice(0)) off();
      await ensurer.settled();
      try {
        const stat = await zk.exists(path);
        if (stat && stat.ephemeralOwner === zk.sessionId) await zk.delete(path, stat.version);
      } catch {
        // The session is gone or going: so is the node.
      }
      emitter.clear();
    },
    [Symbol.asyncDispose]() {
      return node.close();
    },
  };
  return node;
}
