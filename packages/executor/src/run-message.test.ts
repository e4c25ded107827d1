import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SHARD_MESSAGE_MAX_BYTES } from '@orrery/core';
import { failureMessage, lastNonEmptyLine } from './run-message.js';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

describe('failureMessage', () => {
  it.each<[string, string, number | null, string | null, string]>([
    ['empty stderr: the exit code', '', 127, null, 'exit code 127'],
    ['blank stderr: the exit code', '\n  \n\t\n', 1, null, 'exit code 1'],
    ['empty stderr, killed: the signal', '', null, 'SIGKILL', 'killed by SIGKILL'],
    ['one line', 'sh: 1: nosuch: not found\n', 127, null, 'exit code 127: sh: 1: nosuch: not found'],
    ['multi-line: the last non-empty line', 'token=s3cr3t-1-value\nwarming up\nfatal: upstream said no  \n\n', 1, null, 'exit code 1: fatal: upstream said no'],
    ['CRLF lines', 'first\r\nsecond\r\n', 1, null, 'exit code 1: second'],
    ['a lone CR ends a line (a progress bar)', '10%\r50%\rfailed at 50%\r', 1, null, 'exit code 1: failed at 50%'],
    ['a line without a newline at the end', 'a\nb', 2, null, 'exit code 2: b'],
    ['killed, with stderr: the signal and the line', 'Terminated\n', null, 'SIGTERM', 'killed by SIGTERM: Terminated'],
    ['blanks around the line are trimmed', '  \tat main (x.js:1:1)  \n', 1, null, 'exit code 1: at main (x.js:1:1)'],
    ['control characters become blanks', '\u001b[31merror\u001b[0m: bad\u0000input\n', 1, null, 'exit code 1: [31merror [0m: bad input'],
    ['a line of control characters only counts as empty', 'real reason\n\u0007\u0000\n', 3, null, 'exit code 3: real reason'],
  ])('%s', (_label, stderr, exitCode, signal, expected) => {
    expect(failureMessage(stderr, exitCode, signal)).toBe(expected);
  });

  it('cuts a 5 KB single line of multi-byte characters to the limit on a character boundary', () => {
    const line = 'é€😀x'.repeat(512); // 10 bytes a repeat: 5120 bytes
    expect(bytes(line)).toBe(5120);
    const message = failureMessage(`${line}\n`, 1, null);
    expect(bytes(message)).toBeLessThanOrEqual(SHARD_MESSAGE_MAX_BYTES);
    expect(bytes(message)).toBeGreaterThan(SHARD_MESSAGE_MAX_BYTES - 10);
    expect(message).not.toContain('\uFFFD');
    expect(message.endsWith('…')).toBe(true);
    expect(`exit code 1: ${line}`.startsWith(message.slice(0, -1))).toBe(true);
  });

  it('is always one bounded line that starts with the exit code or the signal', () => {
    fc.assert(fc.property(
      fc.string({ unit: 'binary', maxLength: 3000 }),
      fc.oneof(fc.record({ code: fc.integer({ min: 1, max: 255 }), signal: fc.constant(null) }), fc.record({ code: fc.constant(null), signal: fc.constantFrom('SIGKILL', 'SIGTERM', 'SIGSEGV') })),
      (stderr, { code, signal }) => {
        const message = failureMessage(stderr, code, signal);
        expect(bytes(message)).toBeLessThanOrEqual(SHARD_MESSAGE_MAX_BYTES);
        expect(message).not.toMatch(/[\u0000-\u001f\u007f]/);
        expect(message.startsWith(signal ? `killed by ${signal}` : `exit code ${code}`)).toBe(true);
      },
    ));
  });
});

describe('lastNonEmptyLine', () => {
  it.each<[string, string]>([
    ['', ''],
    ['\n', ''],
    ['x', 'x'],
    ['x\n\n', 'x'],
    ['x\n y \n', 'y'],
  ])('%j → %j', (text, expected) => {
    expect(lastNonEmptyLine(text)).toBe(expected);
  });
});
