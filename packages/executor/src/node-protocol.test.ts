// The messages between the executor and its Node workers: what each side accepts.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { describe, expect, it } from 'vitest';
import { isParentMessage } from './node-protocol-check.js';
import { MAX_ID_LENGTH, MAX_PARENT_BATCH, MAX_WORKER_BATCH, ParentMessageSchema, parseParentMessage, parseWorkerMessage, parseWorkerMessages, splitParentBatch } from './node-protocol.js';

const CHECK_FILE = fileURLToPath(new URL('./node-protocol-check.ts', import.meta.url));

/** node-protocol-check.ts as it must be: TypeBox's own code for ParentMessageSchema, standalone. */
function checkSource(): string {
  const body = TypeCompiler.Code(ParentMessageSchema, { language: 'typescript' }).trim().split('\n').map((l) => `  ${l}`).join('\n');
  return `/**
 * The worker's check of the messages it receives: TypeBox's compiled check of \`ParentMessageSchema\`
 * (node-protocol.ts), standalone, so that a worker does not load TypeBox (through tsx, about half
 * a second of every worker's start). Generated — do not edit: node-protocol.test.ts fails when it
 * no longer matches the schema; \`ORRERY_WRITE_PROTOCOL_CHECK=1 npx vitest run
 * packages/executor/src/node-protocol.test.ts\` writes it again.
 */
import type { ParentMessage } from './node-protocol.js';

/** True when \`value\` is a {@link ParentMessage} (exactly what the schema accepts). */
export const isParentMessage = ((): ((value: unknown) => boolean) => {
${body}
})() as (value: unknown) => value is ParentMessage;
`;
}

const run = { type: 'run', runId: 'r1', module: '/jobs/a.ts', context: { shardItem: 1 }, stdoutPath: '/tmp/o', stderrPath: '/tmp/e' };

describe('node-protocol-check.ts', () => {
  it('is the schema\'s compiled check as it is now', () => {
    if (process.env.ORRERY_WRITE_PROTOCOL_CHECK === '1') writeFileSync(CHECK_FILE, checkSource());
    expect(readFileSync(CHECK_FILE, 'utf8'), 'regenerate node-protocol-check.ts (see its header)').toBe(checkSource());
  });
});

describe('parseParentMessage', () => {
  it.each<[string, unknown, boolean]>([
    ['a run', run, true],
    ['a run with startAt, a log cap and owner', { ...run, startAt: 1_700_000_000_000, maxLogBytes: 1024, owner: false }, true],
    ['a run without a module', { ...run, module: undefined }, false],
    ['a run with a context that is not an object', { ...run, context: 'x' }, false],
    ['a run with a negative startAt', { ...run, startAt: -1 }, false],
    ['a run with a zero log cap', { ...run, maxLogBytes: 0 }, false],
    ['a run with an over-long run id', { ...run, runId: 'x'.repeat(MAX_ID_LENGTH + 1) }, false],
    ['a preload', { type: 'preload', module: '/jobs/a.ts' }, true],
    ['a cancel', { type: 'cancel', runId: 'r1' }, true],
    ['a cancel with an empty run id', { type: 'cancel', runId: '' }, false],
    ['an abort', { type: 'abort', runId: 'r1', reason: 'timed-out' }, true],
    ['an ownership', { type: 'ownership', runId: 'r1', owner: false }, true],
    ['an ownership that is not a boolean', { type: 'ownership', runId: 'r1', owner: 'no' }, false],
    ['an unknown type', { type: 'exec', command: 'rm -rf /' }, false],
    ['a worker message', { type: 'ready' }, false],
    ['null', null, false],
    ['a string', 'run', false],
  ])('%s → %s', (_, input, ok) => {
    const parsed = parseParentMessage(input);
    expect(parsed.ok).toBe(ok);
    expect(isParentMessage(input)).toBe(ok); // the worker's standalone check agrees
    if (!parsed.ok) expect(parsed.problem.length).toBeGreaterThan(0);
  });
});

describe('splitParentBatch (what a worker does with what arrives)', () => {
  it.each<[string, unknown, number, boolean]>([
    ['one message', run, 1, false],
    ['a batch of runs, in order', [run, { ...run, runId: 'r2' }], 2, false],
    ['a batch with a bad element: split, each is checked on its own', [run, { type: 'exec' }], 2, false],
    ['an empty batch: refused whole', [], 0, true],
    [`a batch of ${MAX_PARENT_BATCH}`, Array.from({ length: MAX_PARENT_BATCH }, () => run), MAX_PARENT_BATCH, false],
    [`a batch of ${MAX_PARENT_BATCH + 1}: refused whole`, Array.from({ length: MAX_PARENT_BATCH + 1 }, () => run), 0, true],
  ])('%s', (_, input, count, refused) => {
    const { messages, problem } = splitParentBatch(input);
    expect(messages).toHaveLength(count);
    expect(problem !== undefined).toBe(refused);
    if (Array.isArray(input) && !refused) expect(messages).toEqual(input);
    expect(messages.map((m) => isParentMessage(m))).toEqual(messages.map((m) => parseParentMessage(m).ok));
  });
});

describe('parseWorkerMessage', () => {
  const done = { type: 'done', runId: 'r1', ok: true, message: 'fine', stdoutTail: '', stderrTail: 'x' };
  it.each<[string, unknown, boolean]>([
    ['ready', { type: 'ready' }, true],
    ['started', { type: 'started', runId: 'r1', at: 1_700_000_000_000 }, true],
    ['started at a time that is not a number', { type: 'started', runId: 'r1', at: 'now' }, false],
    ['started at NaN', { type: 'started', runId: 'r1', at: Number.NaN }, false],
    ['cancelled', { type: 'cancelled', runId: 'r1' }, true],
    ['cancelled with a numeric run id', { type: 'cancelled', runId: 42 }, false],
    ['done', done, true],
    ['done with truncation counts', { ...done, truncated: { stdout: 10 } }, true],
    ['done with a negative truncation', { ...done, truncated: { stdout: -1 } }, false],
    ['done whose ok is not a boolean', { ...done, ok: 'yes' }, false],
    ['done without tails', { type: 'done', runId: 'r1', ok: true, message: '' }, false],
    ['an executor message', run, false],
    ['an array', [], false],
  ])('%s → %s', (_, input, ok) => {
    expect(parseWorkerMessage(input).ok).toBe(ok);
  });

  it.each<[string, unknown, boolean[]]>([
    ['one message', { type: 'ready' }, [true]],
    ['a done with the next started', [done, { type: 'started', runId: 'r2', at: 1_700_000_000_000 }], [true, true]],
    ['a batch with a bad element: only it is refused', [done, { type: 'started', runId: 'r2', at: 'now' }, { type: 'cancelled', runId: 'r3' }], [true, false, true]],
    ['a nested batch', [[done]], [false]],
    ['an empty batch', [], [false]],
    [`a batch of ${MAX_WORKER_BATCH}`, Array.from({ length: MAX_WORKER_BATCH }, () => done), Array.from({ length: MAX_WORKER_BATCH }, () => true)],
    [`a batch of ${MAX_WORKER_BATCH + 1}: refused whole`, Array.from({ length: MAX_WORKER_BATCH + 1 }, () => done), [false]],
  ])('parseWorkerMessages: %s', (_, input, oks) => {
    expect(parseWorkerMessages(input).map((p) => p.ok)).toEqual(oks);
  });

  it('names the message type and the field in its problem, not the values', () => {
    const parsed = parseWorkerMessage({ type: 'done', runId: 'r1', ok: 'secret-value', message: '', stdoutTail: '', stderrTail: '' });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.problem).toMatch(/^done: /);
      expect(parsed.problem).not.toContain('secret-value');
    }
  });
});
