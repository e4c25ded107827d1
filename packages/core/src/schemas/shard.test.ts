import { describe, expect, it } from 'vitest';
import { SHARD_MESSAGE_MAX_BYTES, checkShardOutcome, checkShardState, clipShardMessage } from './shard.js';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

describe('clipShardMessage', () => {
  it.each<[string, string, number, string]>([
    ['empty', '', 512, ''],
    ['short ASCII is kept', 'exit code 1', 512, 'exit code 1'],
    ['exactly the limit is kept', 'a'.repeat(512), 512, 'a'.repeat(512)],
    ['one byte over is cut with an ellipsis', 'a'.repeat(513), 512, `${'a'.repeat(509)}…`],
    // 'é' is 2 bytes: 9 bytes of room, the 5th 'é' would straddle the cut.
    ['a 2-byte character is not split', 'éééééééé', 12, 'éééé…'],
    // '€' is 3 bytes, '😀' is 4 (a surrogate pair).
    ['a 3-byte character is not split', '€€€€€', 10, '€€…'],
    ['a 4-byte character is not split', '😀😀😀', 10, '😀…'],
    ['tiny limits have no room for the ellipsis', 'abcdef', 2, 'ab'],
  ])('%s', (_label, input, limit, expected) => {
    const out = clipShardMessage(input, limit);
    expect(out).toBe(expected);
    expect(bytes(out)).toBeLessThanOrEqual(limit);
    expect(out).not.toContain('\uFFFD');
  });

  it('never exceeds the limit nor splits a character, whatever the mix', () => {
    const alphabet = ['a', 'é', '€', '😀', '\n'];
    for (let n = 0; n < 300; n += 1) {
      let text = '';
      for (let i = 0; i < 200 + n; i += 1) text += alphabet[(i * 7 + n) % alphabet.length];
      const out = clipShardMessage(text);
      expect(bytes(out)).toBeLessThanOrEqual(SHARD_MESSAGE_MAX_BYTES);
      expect(out).not.toContain('\uFFFD');
      if (bytes(text) <= SHARD_MESSAGE_MAX_BYTES) expect(out).toBe(text);
      else expect(text.startsWith(out.slice(0, -1))).toBe(true);
    }
  });
});

const outcome = {
  status: 'failed', exitCode: 1, startedAt: 1, endedAt: 2, durationMs: 1, executor: 'e', runId: 'r', fireTime: 1, attempt: 1, fencingToken: 5, message: 'boom',
};

describe('shard outcomes in ZooKeeper', () => {
  it('reads an outcome without output tails', () => {
    const r = checkShardOutcome(outcome);
    expect(r.ok).toBe(true);
    expect(r.ok && r.value).toEqual(outcome);
  });

  it('reads an old node that still carries the output tails, and drops them', () => {
    const old = { state: 'idle', last: { ...outcome, stdoutTail: 'token=s3cr3t\n', stderrTail: 'x'.repeat(4096) } };
    const r = checkShardState(old);
    expect(r.ok).toBe(true);
    if (!r.ok || r.value.state !== 'idle') throw new Error('expected idle');
    expect(r.value.last).toEqual(outcome);
    expect(JSON.stringify(r.value)).not.toContain('s3cr3t');
    const running = checkShardState({ state: 'running', executor: 'e', session: 's', runId: 'r2', fireTime: 2, startedAt: 2, last: old.last });
    expect(running.ok && running.value.last && 'stdoutTail' in running.value.last).toBe(false);
    const direct = checkShardOutcome(old.last);
    expect(direct.ok && 'stderrTail' in direct.value).toBe(false);
  });

  it('reads an old node whose message is longer than the limit, clipped', () => {
    const r = checkShardState({ state: 'idle', last: { ...outcome, message: 'é'.repeat(4096) } });
    expect(r.ok).toBe(true);
    if (!r.ok || r.value.state !== 'idle') throw new Error('expected idle');
    expect(bytes(r.value.last!.message)).toBeLessThanOrEqual(SHARD_MESSAGE_MAX_BYTES);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['a message that is not a string', { ...outcome, message: 5 }, 'message', 'type'],
    ['an unknown field', { ...outcome, output: 'all of it' }, 'output', 'unknown-field'],
  ])('still refuses %s', (_label, last, field, rule) => {
    expect(checkShardState({ state: 'idle', last }).ok).toBe(false);
    const r = checkShardOutcome(last);
    expect(!r.ok && r.issues).toContainEqual(expect.objectContaining({ field, rule }));
  });
});
