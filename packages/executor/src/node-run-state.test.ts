// The life of a Node run as a pure transition table (the pool's behaviour is in runners.test.ts and
// node-pool.test.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXECUTOR_STOPPED, stepNodeRun, WITHDRAWN, type NodeRunEffect, type NodeRunEvent, type NodeRunState } from './node-run-state.js';

type W = 'w1' | 'w2';
type S = NodeRunState<W>;
type E = NodeRunEvent<W>;

const waiting: S = { kind: 'waiting' };
const handed: S = { kind: 'handed', worker: 'w1' };
const recalled: S = { kind: 'handed', worker: 'w1', recall: 'requeue' };
const withdrawing: S = { kind: 'handed', worker: 'w1', recall: 'withdraw' };
const stoppedHanded: S = { kind: 'handed', worker: 'w1', recall: { stop: 'stop' } };
const running: S = { kind: 'running', worker: 'w1', startedAt: 100 };
const stopping: S = { kind: 'stopping', worker: 'w1', startedAt: 100, reason: 'timed-out' };
const done: S = { kind: 'done' };

const fin = (status: string, started: boolean, extra: Partial<Extract<NodeRunEffect, { do: 'finish' }>> = {}): NodeRunEffect =>
  ({ do: 'finish', status, exitCode: null, signal: null, message: '', started, ...extra }) as NodeRunEffect;

const table: Array<[string, S, E, S, NodeRunEffect[]]> = [
  ['a waiting run is handed to a worker', waiting, { type: 'hand', worker: 'w1' }, handed, [{ do: 'send-run' }]],
  ['a waiting run withdrawn never runs', waiting, { type: 'withdraw' }, done, [{ do: 'leave-backlog' }, fin('aborted', false, { message: WITHDRAWN, withdrawn: true })]],
  ['a waiting run stopped ends aborted', waiting, { type: 'stop', reason: 'fence' }, done, [{ do: 'leave-backlog' }, fin('aborted', false, { reason: 'fence' })]],
  ['a waiting run times out', waiting, { type: 'stop', reason: 'timed-out' }, done, [{ do: 'leave-backlog' }, fin('timed-out', false, { reason: 'timed-out' })]],
  ['a waiting run at close', waiting, { type: 'close' }, done, [{ do: 'leave-backlog' }, fin('aborted', false, { message: EXECUTOR_STOPPED })]],
  ['a waiting run ignores a start it cannot have had', waiting, { type: 'started', at: 1 }, waiting, []],
  ['a handed run stuck behind a long one is recalled', handed, { type: 'recall' }, recalled, [{ do: 'send-cancel' }]],
  ['a recall is sent once', recalled, { type: 'recall' }, recalled, []],
  ['a handed run withdrawn: a cancel goes', handed, { type: 'withdraw' }, withdrawing, [{ do: 'send-cancel' }]],
  ['a recalled run withdrawn: no second cancel', recalled, { type: 'withdraw' }, withdrawing, []],
  ['a handed run stopped: a cancel goes', handed, { type: 'stop', reason: 'stop' }, stoppedHanded, [{ do: 'send-cancel' }]],
  ['a withdrawing run stopped: the stop wins, no second cancel', withdrawing, { type: 'stop', reason: 'stop' }, stoppedHanded, []],
  ['a stopped handed run ignores a withdrawal', stoppedHanded, { type: 'withdraw' }, stoppedHanded, []],
  ['a handed run starts', handed, { type: 'started', at: 5 }, { kind: 'running', worker: 'w1', startedAt: 5 }, [{ do: 'announce-start', at: 5 }]],
  ['a recalled run that started anyway runs', recalled, { type: 'started', at: 5 }, { kind: 'running', worker: 'w1', startedAt: 5 }, [{ do: 'announce-start', at: 5 }]],
  ['a withdrawn run that started anyway runs', withdrawing, { type: 'started', at: 5 }, { kind: 'running', worker: 'w1', startedAt: 5 }, [{ do: 'announce-start', at: 5 }]],
  ['a stopped run that started anyway is killed', stoppedHanded, { type: 'started', at: 5 }, { kind: 'stopping', worker: 'w1', startedAt: 5, reason: 'stop' }, [{ do: 'announce-start', at: 5 }, { do: 'kill' }]],
  ['a recalled run confirmed goes back to the front of the pool', recalled, { type: 'cancelled' }, waiting, [{ do: 'requeue', front: true }]],
  ['a withdrawn run confirmed ends withdrawn', withdrawing, { type: 'cancelled' }, done, [fin('aborted', false, { message: WITHDRAWN, withdrawn: true })]],
  ['a stopped run confirmed ends aborted', stoppedHanded, { type: 'cancelled' }, done, [fin('aborted', false, { reason: 'stop' })]],
  ['a handed run whose worker died goes back to the pool', handed, { type: 'worker-gone', exitCode: null, signal: 'SIGKILL' }, waiting, [{ do: 'requeue', front: false }]],
  ['a withdrawn run whose worker died ends withdrawn', withdrawing, { type: 'worker-gone', exitCode: 0, signal: null }, done, [fin('aborted', false, { message: WITHDRAWN, withdrawn: true })]],
  ['a handed run at close', handed, { type: 'close' }, done, [fin('aborted', false, { message: EXECUTOR_STOPPED })]],
  ['a running run succeeds', running, { type: 'finished', ok: true, message: 'hi' }, done, [fin('succeeded', true, { message: 'hi', exitCode: 0 })]],
  ['a running run fails', running, { type: 'finished', ok: false, message: 'boom' }, done, [fin('failed', true, { message: 'boom', exitCode: 1 })]],
  ['a running run whose process died failed', running, { type: 'worker-gone', exitCode: null, signal: 'SIGSEGV' }, done, [fin('failed', true, { message: "the job's process exited (SIGSEGV)", signal: 'SIGSEGV' })]],
  ['a running run stopped is killed', running, { type: 'stop', reason: 'replace' }, { kind: 'stopping', worker: 'w1', startedAt: 100, reason: 'replace' }, [{ do: 'kill' }]],
  ['a fence passes its grace', running, { type: 'stop', reason: 'fence', graceMs: 10 }, { kind: 'stopping', worker: 'w1', startedAt: 100, reason: 'fence' }, [{ do: 'kill', graceMs: 10 }]],
  ['a running run is not withdrawn', running, { type: 'withdraw' }, running, []],
  ['a run being stopped takes a shorter grace', stopping, { type: 'stop', reason: 'fence', graceMs: 10 }, stopping, [{ do: 'shorten-grace', graceMs: 10 }]],
  ['a run being stopped ignores another stop', stopping, { type: 'stop', reason: 'stop' }, stopping, []],
  ['a stopped run that returned in time still ends as stopped', stopping, { type: 'finished', ok: true, message: 'fine' }, done, [fin('timed-out', true, { message: 'fine', exitCode: 0, reason: 'timed-out' })]],
  ['a stopped run killed ends as stopped', stopping, { type: 'worker-gone', exitCode: null, signal: 'SIGKILL' }, done, [fin('timed-out', true, { signal: 'SIGKILL', reason: 'timed-out' })]],
  ['a done run ignores everything', done, { type: 'finished', ok: true, message: '' }, done, []],
];

describe('stepNodeRun', () => {
  it.each(table)('%s', (_, state, event, next, effects) => {
    expect(stepNodeRun(state, event)).toEqual({ state: next, effects });
  });

  const event: fc.Arbitrary<E> = fc.oneof(
    fc.constantFrom<E>({ type: 'recall' }, { type: 'withdraw' }, { type: 'cancelled' }, { type: 'close' }, { type: 'finished', ok: true, message: '' }, { type: 'worker-gone', exitCode: null, signal: 'SIGKILL' }),
    fc.record({ type: fc.constant('hand' as const), worker: fc.constantFrom<W>('w1', 'w2') }),
    fc.record({ type: fc.constant('stop' as const), reason: fc.constantFrom('stop' as const, 'fence' as const, 'timed-out' as const) }),
    fc.record({ type: fc.constant('started' as const), at: fc.nat() }),
  );

  it('finishes a run at most once, whatever the events, and never reports a run started that did not', () => {
    fc.assert(fc.property(fc.array(event, { maxLength: 30 }), (events) => {
      let state: S = waiting;
      let finishes = 0;
      let startedSeen = false;
      for (const e of events) {
        const step: { state: S; effects: NodeRunEffect[] } = stepNodeRun(state, e);
        for (const effect of step.effects) {
          if (effect.do === 'announce-start') startedSeen = true;
          if (effect.do === 'finish') {
            finishes += 1;
            expect(effect.started).toBe(startedSeen);
          }
        }
        state = step.state;
      }
      expect(finishes).toBe(state.kind === 'done' ? 1 : 0);
    }));
  });
});
