/**
 * The life of one Node run in the pool (node-pool.ts), as one tagged union and one pure transition
 * function. The pool holds a {@link NodeRunState} per run, feeds every event through
 * {@link stepNodeRun} and carries out the effects it returns — nothing else changes a run's state.
 *
 * ```
 *  waiting ──hand──▶ handed ──started──▶ running ──finished / worker gone──▶ done
 *     ▲                │  ▲                 │
 *     └──cancelled─────┘  │ (recall sent)   └──stop / timeout──▶ stopping ──finished / gone──▶ done
 *  (back to the pool)     └── stop / withdraw / recall: a `cancel` goes to the worker; its
 *                             `cancelled` ends the run (never run) or sends it back to the pool,
 *                             its `started` (it won the race) makes it running, or stopping.
 * ```
 *
 * Guarantees (checked by node-run-state.test.ts):
 * - a run is finished exactly once (`finish` appears in the effects of one step only; `done` absorbs);
 * - a run that did not start is never reported as started, and a run handed to a worker goes back
 *   to the pool only after that worker confirmed it never started it (`cancelled`) or is gone;
 * - a run stopped or timed out ends `aborted` / `timed-out` whatever the job said afterwards;
 * - a withdrawn run that never started ends with `withdrawn`; one that started goes on.
 */
import type { RunStatus } from '@orrery/core';
import type { StopReason } from './run-types.js';

/** Why a run is being ended from outside. */
export type EndReason = 'timed-out' | StopReason;

/** What a `cancel` sent to the worker is for: back to the pool, withdrawn, or stopped. */
export type Recall = 'requeue' | 'withdraw' | { stop: EndReason };

/** A Node run's state; `W` is the pool's worker (opaque here). */
export type NodeRunState<W> =
  /** In the pool's backlog, in no worker. */
  | { kind: 'waiting' }
  /** Sent to `worker`, not started there; `recall`: a cancel was sent, and why. */
  | { kind: 'handed'; worker: W; recall?: Recall }
  /** Started in `worker` at `startedAt` (the worker's clock). */
  | { kind: 'running'; worker: W; startedAt: number }
  /** Running, its signal aborted and its worker's group being killed. */
  | { kind: 'stopping'; worker: W; startedAt: number; reason: EndReason }
  | { kind: 'done' };

/** What happens to a run. */
export type NodeRunEvent<W> =
  /** The pool hands it to a worker. */
  | { type: 'hand'; worker: W }
  /** Waiting behind a run that turned out long: take it back, to go to a free worker. */
  | { type: 'recall' }
  /** {@link RunHandle.withdraw}: take it back if it has not started. */
  | { type: 'withdraw' }
  /** Stop or timeout; `graceMs`: a shorter grace than the run's own (a fence). */
  | { type: 'stop'; reason: EndReason; graceMs?: number }
  /** The worker says it started it. */
  | { type: 'started'; at: number }
  /** The worker says it took it back before it started. */
  | { type: 'cancelled' }
  /** The worker says it ended (`done`). */
  | { type: 'finished'; ok: boolean; message: string }
  /** The worker's process is gone (and every message it sent was read). */
  | { type: 'worker-gone'; exitCode: number | null; signal: string | null }
  /** The pool closes. */
  | { type: 'close' };

/** What the pool does after a step. */
export type NodeRunEffect =
  | { do: 'send-run' }
  | { do: 'send-cancel' }
  /** Put it back in the pool's backlog: at the front (it was waiting already) or the back. */
  | { do: 'requeue'; front: boolean }
  /** Take it out of the pool's backlog. */
  | { do: 'leave-backlog' }
  /** Tell the caller it started, and start its timeout. */
  | { do: 'announce-start'; at: number }
  /** Abort its signal, SIGTERM its worker's group, SIGKILL after the grace; the worker is not reused. */
  | { do: 'kill'; graceMs?: number }
  /** Already being killed: SIGKILL after this shorter grace. */
  | { do: 'shorten-grace'; graceMs: number }
  /**
   * Report the outcome. `message` '' means the default one for the status; `started`: whether it
   * ever started (for that message, and whether its log files are read back); `reason`: why it was
   * ended from outside, if it was.
   */
  | { do: 'finish'; status: RunStatus; exitCode: number | null; signal: string | null; message: string; started: boolean; reason?: EndReason; withdrawn?: true };

/** The result of a step. */
export interface NodeRunStep<W> {
  state: NodeRunState<W>;
  effects: NodeRunEffect[];
}

/** The message of a run the executor stopped while it had not started. */
export const EXECUTOR_STOPPED = 'the executor stopped';
/** The message of a withdrawn run. */
export const WITHDRAWN = 'withdrawn before it started';

const endStatus = (reason: EndReason): RunStatus => (reason === 'timed-out' ? 'timed-out' : 'aborted');
const DONE = { kind: 'done' } as const;

function finish(status: RunStatus, started: boolean, message = '', exitCode: number | null = null, signal: string | null = null, withdrawn = false): NodeRunEffect {
  return { do: 'finish', status, exitCode, signal, message, started, ...(withdrawn ? { withdrawn: true as const } : {}) };
}

/** The outcome of a run ended from outside for `reason`. */
function ended(reason: EndReason, started: boolean, message = '', exitCode: number | null = null, signal: string | null = null): NodeRunEffect {
  return { do: 'finish', status: endStatus(reason), exitCode, signal, message, started, reason };
}

/** How a run that never started ends once its recall is confirmed or its worker is gone. */
function endRecalled<W>(recall: Recall | undefined, front: boolean): NodeRunStep<W> {
  if (recall === 'withdraw') return { state: DONE, effects: [finish('aborted', false, WITHDRAWN, null, null, true)] };
  if (typeof recall === 'object') return { state: DONE, effects: [ended(recall.stop, false)] };
  return { state: { kind: 'waiting' }, effects: [{ do: 'requeue', front }] };
}

/** One transition: the next state and what to do. Pure; an event that means nothing in a state changes nothing. */
export function stepNodeRun<W>(state: NodeRunState<W>, event: NodeRunEvent<W>): NodeRunStep<W> {
  const same: NodeRunStep<W> = { state, effects: [] };
  switch (state.kind) {
    case 'waiting':
      switch (event.type) {
        case 'hand':
          return { state: { kind: 'handed', worker: event.worker }, effects: [{ do: 'send-run' }] };
        case 'withdraw':
          return { state: DONE, effects: [{ do: 'leave-backlog' }, finish('aborted', false, WITHDRAWN, null, null, true)] };
        case 'stop':
          return { state: DONE, effects: [{ do: 'leave-backlog' }, ended(event.reason, false)] };
        case 'close':
          return { state: DONE, effects: [{ do: 'leave-backlog' }, finish('aborted', false, EXECUTOR_STOPPED)] };
        default:
          return same;
      }
    case 'handed': {
      const cancel: NodeRunEffect[] = state.recall ? [] : [{ do: 'send-cancel' }];
      switch (event.type) {
        case 'recall':
          return state.recall ? same : { state: { ...state, recall: 'requeue' }, effects: cancel };
        case 'withdraw':
          if (typeof state.recall === 'object') return same; // being stopped: that wins
          return { state: { ...state, recall: 'withdraw' }, effects: cancel };
        case 'stop':
          if (typeof state.recall === 'object') return same;
          return { state: { ...state, recall: { stop: event.reason } }, effects: cancel };
        case 'started':
          // It started before the cancel reached the worker: a stop still stops it (the hard way);
          // a recall or a withdrawal no longer applies.
          if (typeof state.recall === 'object') {
            return { state: { kind: 'stopping', worker: state.worker, startedAt: event.at, reason: state.recall.stop }, effects: [{ do: 'announce-start', at: event.at }, { do: 'kill' }] };
          }
          return { state: { kind: 'running', worker: state.worker, startedAt: event.at }, effects: [{ do: 'announce-start', at: event.at }] };
        case 'cancelled':
          return endRecalled(state.recall, true);
        case 'worker-gone':
          return endRecalled(state.recall, false);
        case 'close':
          return { state: DONE, effects: [finish('aborted', false, EXECUTOR_STOPPED)] };
        default:
          return same;
      }
    }
    case 'running':
      switch (event.type) {
        case 'stop':
          return { state: { kind: 'stopping', worker: state.worker, startedAt: state.startedAt, reason: event.reason }, effects: [{ do: 'kill', ...(event.graceMs !== undefined ? { graceMs: event.graceMs } : {}) }] };
        case 'finished':
          return { state: DONE, effects: [finish(event.ok ? 'succeeded' : 'failed', true, event.message, event.ok ? 0 : 1)] };
        case 'worker-gone':
          return { state: DONE, effects: [finish('failed', true, `the job's process exited (${event.signal ?? `code ${event.exitCode}`})`, event.exitCode, event.signal)] };
        default:
          return same;
      }
    case 'stopping':
      switch (event.type) {
        case 'stop':
          return event.graceMs !== undefined ? { state, effects: [{ do: 'shorten-grace', graceMs: event.graceMs }] } : same;
        case 'finished':
          // A run stopped from outside ends as such, even if the job returned in time to say otherwise.
          return { state: DONE, effects: [ended(state.reason, true, event.message, event.ok ? 0 : 1)] };
        case 'worker-gone':
          return { state: DONE, effects: [ended(state.reason, true, '', event.exitCode, event.signal)] };
        default:
          return same;
      }
    case 'done':
      return same;
  }
}
