/**
 * The shard claim protocol (docs/architecture.md): two compare-and-set writes per run, no more.
 *
 * - **claim**: the shard node goes from the version the claimer read (idle, or missing) to
 *   `running` with the claimer's session and run id. A failed compare-and-set means another run
 *   holds or just took the item. The claim's `mzxid` is the run's **fencing token** — globally
 *   increasing, so a later run of the same item always carries a larger one.
 * - **complete**: from the claim's version to `idle` with the outcome. If anything else wrote the
 *   node since the claim (a failover, a takeover), the completion fails and records nothing: a
 *   stale run can never record an outcome.
 *
 * - **failover**: the job leader turns the claim of a dead session into `failover` (one
 *   compare-and-set); from there only a failover claim of that same fire time may take the shard —
 *   any other claim is refused with `failover-pending`, so the crashed fire is re-run first.
 *
 * Guarantees: for one shard node, at most one run is `running` at a time, and the fire time of the
 * last completed run is never overwritten by an older claim (`already-ran`).
 * Not guaranteed: that the holder of a claim is still alive — that is failover's job (the job leader
 * compares the claim's session with live presences).
 */
import { OrreryError, hasErrorCode, errorCode } from '../errors.js';
import { encodeJson } from '../json.js';
import { decodeChecked } from '../recipes/versioned.js';
import { checkShardState, type ShardOutcome, type ShardState } from '../schemas/shard.js';
import type { ZkClient } from '../zk/client.js';

/** Who claims, for which fire. */
export interface ClaimRequest {
  executor: string;
  /** The claimer's ZooKeeper session id (hex). */
  session: string;
  runId: string;
  fireTime: number;
  attempt?: number;
  startedAt: number;
  /** Claim even if a run of this fire time already completed (retries, run-now). */
  rerun?: boolean;
  /** A failover re-run: succeeds only from a `failover` mark of this fire time. */
  failover?: boolean;
  /**
   * The node as the claimer last wrote it (its completion): when it is still at that version the
   * claim needs no read — one round trip instead of two. Stale knowledge only costs the read.
   */
  known?: { version: number; state: ShardState };
}

/** A held claim. */
export interface Claim {
  path: string;
  /** The node version the claim wrote; completion must find it unchanged. */
  version: number;
  /** The claim's mzxid. */
  fencingToken: number;
  state: Extract<ShardState, { state: 'running' }>;
}

/** The result of {@link claimShard}. */
export type ClaimResult =
  | { claimed: true; claim: Claim }
  | { claimed: false; reason: 'running'; holder: Extract<ShardState, { state: 'running' }>; version: number }
  | { claimed: false; reason: 'already-ran'; last: ShardOutcome }
  | { claimed: false; reason: 'failover-pending'; mark: Extract<ShardState, { state: 'failover' }> }
  | { claimed: false; reason: 'raced' };

/** Reads a shard node: its state and version (`undefined` when missing). */
export async function readShard(zk: ZkClient, path: string): Promise<{ state: ShardState; version: number; mzxid: number } | undefined> {
  try {
    const { data, stat } = await zk.get(path);
    const state = data === null ? ({ state: 'idle' } as ShardState) : decodeChecked(data, path, checkShardState);
    return { state, version: stat.version, mzxid: stat.mzxid };
  } catch (error) {
    if (hasErrorCode(error, 'no-node')) return undefined;
    throw error;
  }
}

/** Claims the shard at `path` for one run: one write (a create or a compare-and-set). */
export async function claimShard(zk: ZkClient, path: string, request: ClaimRequest): Promise<ClaimResult> {
  if (request.known && request.known.state.state === 'idle') {
    const fast = await claimFrom(zk, path, request, { state: request.known.state, version: request.known.version }, true);
    if (fast) return fast;
  }
  return (await claimFrom(zk, path, request, await readShard(zk, path), false))!;
}

/** Claims from a known node state; with `optimistic`, a lost compare-and-set means "read and retry" (undefined). */
async function claimFrom(
  zk: ZkClient,
  path: string,
  request: ClaimRequest,
  current: { state: ShardState; version: number } | undefined,
  optimistic: boolean,
): Promise<ClaimResult | undefined> {
  const last = current?.state.last;
  if (current?.state.state === 'running' && current.state.runId === request.runId && 'mzxid' in current) {
    // Our own claim, whose answer was lost with the connection: we hold it.
    const mine = current as { state: Claim['state']; version: number; mzxid: number };
    return { claimed: true, claim: { path, version: mine.version, fencingToken: mine.mzxid, state: mine.state } };
  }
  if (current?.state.state === 'running') return { claimed: false, reason: 'running', holder: current.state, version: current.version };
  if (current?.state.state === 'failover') {
    if (!request.failover || request.fireTime !== current.state.fireTime) return { claimed: false, reason: 'failover-pending', mark: current.state };
  } else if (request.failover) {
    // The mark is gone: re-run by someone else already (or cleared).
    return last && last.fireTime >= request.fireTime ? { claimed: false, reason: 'already-ran', last } : { claimed: false, reason: 'raced' };
  } else if (!request.rerun && last && last.fireTime >= request.fireTime) return { claimed: false, reason: 'already-ran', last };
  const running: Claim['state'] = {
    state: 'running',
    executor: request.executor,
    session: request.session,
    runId: request.runId,
    fireTime: request.fireTime,
    startedAt: request.startedAt,
    attempt: request.attempt ?? 1,
    ...(last ? { last } : {}),
  };
  try {
    if (!current) {
      await zk.create(path, encodeJson(running));
      // create returns no stat; the node may already have moved on, so read it (a read, not a write).
      const stat = await zk.exists(path);
      if (!stat || stat.version !== 0) return { claimed: false, reason: 'raced' };
      return { claimed: true, claim: { path, version: 0, fencingToken: stat.mzxid, state: running } };
    }
    const stat = await zk.set(path, encodeJson(running), current.version);
    return { claimed: true, claim: { path, version: stat.version, fencingToken: stat.mzxid, state: running } };
  } catch (error) {
    const code = errorCode(error);
    if (optimistic && (code === 'bad-version' || code === 'no-node')) return undefined;
    if (code === 'bad-version' || code === 'node-exists' || code === 'no-node') return { claimed: false, reason: 'raced' };
    throw error;
  }
}

/**
 * Marks the claim of a dead session for a failover re-run (the job leader's move): one
 * compare-and-set from the version read. Resolves false when the node changed meanwhile.
 */
export async function markFailover(zk: ZkClient, path: string, read: { state: Extract<ShardState, { state: 'running' }>; version: number }, markedAt = Date.now()): Promise<boolean> {
  const { executor, session, runId, fireTime, startedAt, attempt, last } = read.state;
  const mark: ShardState = { state: 'failover', executor, session, runId, fireTime, startedAt, attempt, markedAt, ...(last ? { last } : {}) };
  try {
    await zk.set(path, encodeJson(mark), read.version);
    return true;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'bad-version' || code === 'no-node') return false;
    throw error;
  }
}

/**
 * Records the outcome of a claimed run: one compare-and-set from the claim's version. Resolves
 * `recorded: false` (and writes nothing) when the claim was taken over meanwhile; else the node's
 * new version and state (pass them as `known` to the next claim).
 */
export async function completeShard(zk: ZkClient, claim: Claim, outcome: ShardOutcome): Promise<{ recorded: true; version: number; state: ShardState } | { recorded: false }> {
  const idle: ShardState = { state: 'idle', last: outcome };
  try {
    const stat = await zk.set(claim.path, encodeJson(idle), claim.version);
    return { recorded: true, version: stat.version, state: idle };
  } catch (error) {
    const code = errorCode(error);
    if (code === 'bad-version' || code === 'no-node') return { recorded: false };
    throw error;
  }
}
