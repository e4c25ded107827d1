/**
 * Self-fencing: an executor that may have lost its ZooKeeper session kills its runs **before** the
 * server can expire that session and hand its shards to someone else, and starts no new fire until
 * it has a live session again.
 *
 * The timing rule (docs/architecture.md, "Self-fencing"):
 * - The server expires a session no earlier than T (the negotiated session timeout) after the last
 *   packet it received from the client. A probe (`exists /`) sent at `s` and answered proves the
 *   server heard the client at or after `s`; so the session is alive until at least `s + T`.
 * - Probes go out every P = T/5 (100 ms … 2 s) while connected. The **fence deadline** is
 *   `s + T − M` for the latest answered probe, M = T/10 (100 ms … 1 s) for timer and kill slack.
 * - At `deadline − G` (G = T/5, 100 ms … the kill grace) the executor stops every run (SIGTERM,
 *   SIGKILL after G) and new fires stop starting; at `deadline` the fence guard — a separate process
 *   that keeps running when the executor is frozen — SIGKILLs every job process group left.
 * - A session the server reports expired (LOST) fences at once, with no grace.
 * In steady state the deadline stays about 0.7 T ahead, so nothing is fenced without cause.
 *
 * Times are on the monotonic clock shared by every process of the host (`process.hrtime`), so a
 * wall-clock step cannot fence or unfence anything.
 *
 * When the executor process dies and its host lives (`kill -9`, OOM), the guard kills its job
 * groups, waits until they are dead, and then closes the dead executor's session itself, so its
 * shards fail over at once (the safety argument is in fence-guard.mjs). For that the fence sends the
 * guard every new session's id and password — over IPC only; the password is never logged — and a
 * clean {@link SessionFence.close} says goodbye first, so the guard leaves the session alone.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stdioWithoutSockets, toError, type Logger, type ZkClient } from '@orrery/core';

const GUARD = fileURLToPath(new URL('./fence-guard.mjs', import.meta.url));

/** The environment variable that carries the executor's run mark into every job process (see `runMark`). */
export const RUN_MARK_ENV = 'ORRERY_RUN_MARK';

/** Milliseconds on the host's monotonic clock. */
export const monotonicMs = (): number => Number(process.hrtime.bigint() / 1_000_000n);

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));

/** The fence's timing for a session timeout of `sessionTimeoutMs` (see the module comment). */
export function fenceTiming(sessionTimeoutMs: number, killGraceMs: number): { probeMs: number; marginMs: number; graceMs: number } {
  const t = sessionTimeoutMs;
  return {
    probeMs: Math.round(clamp(t / 5, 100, 2000)),
    marginMs: Math.round(clamp(t / 10, 100, 1000)),
    graceMs: Math.round(clamp(t / 5, 100, Math.max(100, killGraceMs))),
  };
}

export interface SessionFenceOptions {
  zk: ZkClient;
  logger: Logger;
  /** Between SIGTERM and SIGKILL for an ordinary stop; the fence's grace is at most this. */
  killGraceMs: number;
  /** Stop every run now, SIGKILL after `graceMs`. */
  onFence(reason: 'deadline' | 'session-lost', graceMs: number): void;
  /** Start the guard process (default true). */
  guard?: boolean;
  /**
   * The value of `ORRERY_RUN_MARK` in every job process's environment: if the executor dies, the
   * guard also kills the group of any process that carries it (a group it was never told about).
   */
  runMark?: string;
}

export interface SessionFence {
  start(): Promise<void>;
  /** New fires may start: connected, and the fence is not near. */
  canStart(): boolean;
  /** Job process groups the guard kills at the deadline or when the executor dies. */
  track(pgid: number): void;
  untrack(pgid: number): void;
  /** The current fence deadline on the monotonic clock (undefined before the first answered probe). */
  readonly deadline: number | undefined;
  close(): Promise<void>;
}

export function createSessionFence(options: SessionFenceOptions): SessionFence {
  const { zk, logger } = options;
  let deadline: number | undefined;
  let probeTimer: NodeJS.Timeout | undefined;
  let fenceTimer: NodeJS.Timeout | undefined;
  let fencedFor: number | undefined;
  // Set while the link is (or was) suspended and no probe sent since the reconnect has been
  // answered: the deadline may still be ahead, but it is the old link's, so nothing new starts.
  let unproven = false;
  let closed = false;
  let guard: ChildProcess | undefined;
  const tracked = new Set<number>();
  const offs: Array<() => void> = [];
  const timing = () => fenceTiming(zk.sessionTimeoutMs, options.killGraceMs);

  const toGuard = (message: unknown): void => {
    if (guard?.connected) guard.send(message as object, () => undefined);
  };

  /** Tells the guard the session it would close if the executor died (none when it is lost). */
  function sendSession(): void {
    if (!guard || zk.phase !== 'connected') {
      toGuard({ type: 'session', sessionId: null });
      return;
    }
    let credentials: { clientId: string; password: string };
    try {
      credentials = zk.sessionCredentials();
    } catch {
      toGuard({ type: 'session', sessionId: null });
      return;
    }
    toGuard({ type: 'session', connect: zk.options.connect, timeoutMs: zk.sessionTimeoutMs, sessionId: credentials.clientId, password: credentials.password });
  }

  function fence(reason: 'deadline' | 'session-lost', graceMs: number): void {
    logger.warn({ reason, graceMs }, 'self-fencing: stopping every run (the ZooKeeper session may expire)');
    options.onFence(reason, graceMs);
  }

  function armFence(): void {
    if (fenceTimer) clearTimeout(fenceTimer);
    fenceTimer = undefined;
    if (deadline === undefined || closed) return;
    const at = deadline - timing().graceMs;
    fenceTimer = setTimeout(() => {
      fenceTimer = undefined;
      if (deadline === undefined || monotonicMs() < deadline - timing().graceMs) return armFence();
      if (fencedFor === deadline) return;
      fencedFor = deadline;
      fence('deadline', Math.max(0, deadline - monotonicMs()));
    }, Math.max(0, at - monotonicMs()));
  }

  async function probe(): Promise<void> {
    probeTimer = undefined;
    if (closed) return;
    if (zk.phase === 'connected') {
      const sentAt = monotonicMs();
      const session = zk.sessionId;
      const wasUnproven = unproven;
      try {
        await zk.probe(); // ahead of any requests waiting for a slot
        if (zk.sessionId === session) {
          // Sent after the reconnect and answered: the link is proven again (a SUSPENDED since
          // then set the flag anew, and this answer predates it only if it was sent before).
          if (wasUnproven && zk.phase === 'connected') unproven = false;
          const next = sentAt + zk.sessionTimeoutMs - timing().marginMs;
          if (deadline === undefined || next > deadline) {
            deadline = next;
            toGuard({ type: 'deadline', at: deadline });
            armFence();
          }
        }
      } catch {
        // No answer: the deadline stays where the last answer put it.
      }
    }
    if (!closed) probeTimer = setTimeout(() => void probe(), timing().probeMs);
  }

  return {
    async start() {
      if (options.guard !== false) {
        guard = fork(GUARD, [], { detached: true, stdio: stdioWithoutSockets(['ignore', 'ignore', 'inherit', 'ipc']), execArgv: [] });
        guard.unref();
        guard.channel?.unref();
        guard.on('message', (m: { type: string; pgids?: number[] }) => {
          if (m.type === 'fenced') logger.warn({ pgids: m.pgids }, 'the fence guard killed job process groups at the fence deadline');
        });
        guard.on('error', (error) => logger.error({ err: toError(error) }, 'fence guard failed'));
        await new Promise<void>((resolve) => {
          guard!.once('message', () => resolve());
          guard!.once('exit', () => resolve());
        });
        if (options.runMark) toGuard({ type: 'mark', value: options.runMark });
        for (const pgid of tracked) toGuard({ type: 'track', pgid });
        sendSession();
        logger.info({ pid: guard.pid }, 'fence guard started');
      }
      offs.push(zk.on('state', (s) => {
        if (s.state === 'SUSPENDED') unproven = true;
        if (s.state === 'RECONNECTED' && !s.newSession) {
          // The same session over a new connection: prove it at once rather than at the next
          // probe, so that runs start again as soon as the server has answered.
          if (probeTimer) clearTimeout(probeTimer);
          void probe();
        }
        if (s.state === 'LOST') {
          // The session is gone (or must be taken as gone): whatever still runs for it is stale.
          deadline = undefined;
          toGuard({ type: 'deadline', at: null });
          toGuard({ type: 'session', sessionId: null });
          armFence();
          fence('session-lost', 0);
        }
      }));
      offs.push(zk.on('session', () => {
        sendSession();
        fencedFor = undefined;
        if (probeTimer) clearTimeout(probeTimer);
        void probe();
      }));
      await probe();
    },
    canStart() {
      return zk.phase === 'connected' && !unproven && deadline !== undefined && monotonicMs() < deadline - timing().graceMs;
    },
    track(pgid) {
      tracked.add(pgid);
      toGuard({ type: 'track', pgid });
    },
    untrack(pgid) {
      tracked.delete(pgid);
      toGuard({ type: 'untrack', pgid });
    },
    get deadline() {
      return deadline;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const off of offs.splice(0)) off();
      if (probeTimer) clearTimeout(probeTimer);
      if (fenceTimer) clearTimeout(fenceTimer);
      const g = guard;
      guard = undefined;
      if (g && g.exitCode === null && g.signalCode === null) {
        const exited = new Promise<void>((resolve) => g.once('exit', () => resolve()));
        // Goodbye first: what is still tracked now is the executor's to stop, not the guard's, and
        // the session is the executor's to close — the guard exits without touching either.
        if (g.connected) {
          g.send({ type: 'goodbye' });
          g.kill('SIGTERM');
        }
        await exited;
      }
    },
  };
}
