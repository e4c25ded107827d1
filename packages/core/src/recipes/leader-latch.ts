/**
 * Leader latch (Curator's LeaderLatch) over ephemeral-sequential nodes under one path.
 *
 * Guarantees:
 * - At most one participant whose session is live and connected believes it leads at any moment,
 *   as far as ZooKeeper's ordering allows: leadership is dropped (`leader:lost`) at once on
 *   SUSPENDED and on LOST, before anything else happens, and taken only while connected.
 * - Each participant watches only its predecessor (no herd when the leader goes); the leader, its
 *   own node. Taking the lead when the predecessor goes is one request (the listing): the
 *   participant read its own node's czxid while waiting.
 * - The leader's `epoch` is its latch node's czxid: it increases with every new leadership, so
 *   writers can stamp their writes and readers can ignore a deposed leader's late writes.
 * - A participant that gets a new session joins again at the end of the queue by itself.
 * - Creation is protected (Curator's protection mode): a create whose answer was lost is found
 *   by its unique prefix instead of leaving a ghost node behind.
 *
 * Not guaranteed: that a deposed leader stops acting at the very instant it is deposed — it learns
 * it only when its link drops (SUSPENDED) or its session ends (LOST). Work that must never overlap
 * must also be fenced by versioned writes (Orrery stamps writes with the epoch).
 */
import { randomUUID } from 'node:crypto';
import { OrreryError, hasErrorCode, toError, isRetryable } from '../errors.js';
import { ensureNode } from './versioned.js';
import { createEmitter, type Subscribable } from '../events.js';
import { createSerialTask } from '../serial-task.js';
import type { ZkClient } from '../zk/client.js';

/** Events of a {@link LeaderLatch}. */
export interface LeaderLatchEvents {
  'leader:acquired': { epoch: number; node: string };
  'leader:lost': { reason: 'suspended' | 'lost' | 'closed' | 'deleted' };
  error: Error;
}

/** A participant in a leader election. */
export interface LeaderLatch extends Subscribable<LeaderLatchEvents> {
  readonly path: string;
  /** The participant id given at creation (stored as the latch node's data). */
  readonly id: string;
  readonly isLeader: boolean;
  /** The current leadership's epoch (latch node czxid), while leader. */
  readonly epoch: number | undefined;
  /** Joins the election; resolves once this participant has a latch node. */
  start(): Promise<void>;
  /** Resolves once this participant leads (or rejects after `timeoutMs`). */
  awaitLeadership(timeoutMs?: number): Promise<number>;
  /** Participant ids in latch order (the first is the leader). */
  participants(): Promise<string[]>;
  /**
   * Leaves the election (deletes its node). Idempotent. `sessionEnding`: the caller closes its
   * ZooKeeper session next, so the node is left for that close to delete — ZooKeeper removes all of
   * a session's ephemeral nodes in the one transaction that closes it, where a delete per latch is a
   * transaction each (an executor leading thousands of jobs). Leadership still ends here at once
   * (`leader:lost`, reason `closed`); the other participants see the node go with the session.
   */
  close(options?: { sessionEnding?: boolean }): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const SEQUENCE = /-(\d{10})$/;
const sequenceOf = (name: string): number => Number(SEQUENCE.exec(name)?.[1] ?? Number.MAX_SAFE_INTEGER);

/** Options of {@link createLeaderLatch}. */
export interface LeaderLatchOptions {
  /** The participant id (default: a random UUID). */
  id?: string;
  /**
   * Create the latch path's missing parents (default true). With false, only the latch path itself
   * is created, and only while its parent exists: a latch under a deleted job waits quietly instead
   * of bringing the job's node back.
   */
  createParents?: boolean;
}

/** Creates a latch on `path` for participant `id`; call `start()`. */
export function createLeaderLatch(zk: ZkClient, path: string, options: LeaderLatchOptions = {}): LeaderLatch {
  const id = options.id ?? randomUUID();
  const emitter = createEmitter<LeaderLatchEvents>();
  let ourNode: string | undefined; // child name
  let ourCzxid: number | undefined; // our node's, once read (the watch on it set)
  let ourSession: string | undefined;
  let leader = false;
  let epoch: number | undefined;
  let closed = false;
  let started: Promise<void> | undefined;
  const offs: Array<() => void> = [];

  function lose(reason: LeaderLatchEvents['leader:lost']['reason']): void {
    if (!leader) return;
    leader = false;
    epoch = undefined;
    emitter.emit('leader:lost', { reason });
  }

  /**
   * Creates our node. Without `createParents` the latch path is made only when the create finds it
   * missing, and only while its parent exists: a latch whose path exists — the usual case — costs
   * one request, where making the path first cost a create that ZooKeeper refused for every
   * participant but the first.
   */
  async function createNode(): Promise<void> {
    const prefix = `latch-${randomUUID()}-`;
    if (options.createParents !== false) await zk.mkdirp(path);
    for (let tries = 1; ; tries += 1) {
      try {
        const created = await zk.create(`${path}/${prefix}`, id, 'ephemeral-sequential');
        ourNode = created.slice(path.length + 1);
        ourCzxid = undefined;
        break;
      } catch (error) {
        // The latch path is missing (not made yet, or deleted): made, unless its parent is gone too
        // — and not over and over if something deletes it each time.
        if (hasErrorCode(error, 'no-node') && options.createParents === false && tries < 3) {
          if (!(await ensureNode(zk, path))) throw new OrreryError('no-node', `${path}: its parent does not exist (deleted?); not joining the latch`);
          continue;
        }
        if (!hasErrorCode(error, 'connection-loss')) throw error;
        // The create may have happened: find it by its unique prefix (protection mode).
        await zk.whenConnected();
        const found = (await zk.getChildren(path)).find((c) => c.startsWith(prefix));
        if (!found) throw error;
        // Its create answer was lost, so its ACL may not be set yet (a no-op without auth).
        await zk.secure(`${path}/${found}`);
        ourNode = found;
        ourCzxid = undefined;
        break;
      }
    }
    ourSession = zk.sessionId;
  }

  async function checkOnce(): Promise<void> {
    if (closed || zk.phase !== 'connected') return;
    if (!ourNode || ourSession !== zk.sessionId) {
      lose('lost');
      ourNode = undefined;
      await createNode();
    }
    const children = (await zk.getChildren(path)).filter((c) => SEQUENCE.test(c)).sort((a, b) => sequenceOf(a) - sequenceOf(b));
    const index = children.indexOf(ourNode!);
    if (index < 0) {
      // Our node was deleted under us (by hand, say): leave leadership and join again.
      lose('deleted');
      ourNode = undefined;
      check();
      return;
    }
    if (index === 0) {
      if (!leader && zk.phase === 'connected') {
        const node = ourNode!;
        // The leader watches its own node (deleted by hand: a check). Read while waiting, its czxid
        // makes taking the lead need no request: the watch is then set without waiting for it.
        let czxid = ourCzxid;
        if (czxid === undefined) {
          const stat = await zk.exists(`${path}/${node}`, onWatch);
          if (!stat) {
            check();
            return;
          }
          czxid = stat.czxid;
        } else {
          void zk.exists(`${path}/${node}`, onWatch).then((stat) => {
            if (!stat) check();
          }, () => check());
        }
        if (zk.phase !== 'connected' || closed || node !== ourNode) return;
        leader = true;
        epoch = czxid;
        emitter.emit('leader:acquired', { epoch: czxid, node });
      }
      return;
    }
    lose('deleted');
    const predecessor = children[index - 1]!;
    // While waiting, our node's czxid is read (once, no watch): taking the lead then needs no request.
    const [stat] = await Promise.all([zk.exists(`${path}/${predecessor}`, onWatch), ourCzxid === undefined ? readOurCzxid() : undefined]);
    if (!stat) check(); // it went before our watch was set
  }

  /** Remembers our node's czxid (the epoch of a leadership). */
  async function readOurCzxid(): Promise<void> {
    const node = ourNode;
    const stat = await zk.exists(`${path}/${node}`);
    if (stat && node === ourNode) ourCzxid = stat.czxid;
  }

  // One check pass at a time; an event during a pass asks for one more.
  const checker = createSerialTask(async () => {
    try {
      await checkOnce();
    } catch (error) {
      const e = toError(error);
      // Retryable (connection trouble): the next RECONNECTED or session calls us again. A latch
      // whose path's parent is gone (a deleted job) waits quietly: its owner is about to close it.
      if (hasErrorCode(e, 'no-node')) return;
      if (!isRetryable(e)) emitter.emit('error', e);
    }
  }, () => !closed);
  const check = (): void => {
    if (!closed) checker.trigger();
  };
  const onWatch = (): void => check();

  const latch: LeaderLatch = {
    path,
    id,
    get isLeader() {
      return leader;
    },
    get epoch() {
      return epoch;
    },
    on: emitter.on,
    start() {
      if (started) return started;
      offs.push(
        zk.on('state', ({ state }) => {
          if (state === 'SUSPENDED') lose('suspended');
          else if (state === 'LOST') {
            lose('lost');
            ourNode = undefined;
          } else if (state === 'RECONNECTED') check();
        }),
        zk.on('session', () => check()),
      );
      started = (async () => {
        await zk.whenConnected();
        // The first check creates our node; later ones (events) reuse it.
        check();
        await checker.settled();
      })();
      return started;
    },
    awaitLeadership(timeoutMs = 30_000) {
      if (leader && epoch !== undefined) return Promise.resolve(epoch);
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => {
          off();
          reject(new OrreryError('timeout', `not leader of ${path} within ${timeoutMs} ms`));
        }, timeoutMs);
        const off = emitter.on('leader:acquired', ({ epoch: e }) => {
          clearTimeout(timer);
          off();
          resolve(e);
        });
      });
    },
    async participants() {
      const children = (await zk.getChildren(path)).filter((c) => SEQUENCE.test(c)).sort((a, b) => sequenceOf(a) - sequenceOf(b));
      const ids: string[] = [];
      for (const child of children) {
        try {
          ids.push((await zk.get(`${path}/${child}`)).data?.toString('utf8') ?? '');
        } catch (error) {
          if (!hasErrorCode(error, 'no-node')) throw error;
        }
      }
      return ids;
    },
    async close(options = {}) {
      if (closed) return;
      closed = true;
      for (const off of offs.splice(0)) off();
      await started?.catch(() => undefined);
      await checker.settled();
      lose('closed');
      const node = ourNode;
      ourNode = undefined;
      if (node && !options.sessionEnding && ourSession === zk.sessionId && zk.phase === 'connected') {
        try {
          await zk.delete(`${path}/${node}`);
        } catch {
          // Gone already, or the session is going (and the node with it).
        }
      }
      emitter.clear();
    },
    [Symbol.asyncDispose]() {
      return latch.close();
    },
  };
  return latch;
}
