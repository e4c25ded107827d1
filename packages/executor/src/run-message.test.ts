import { describe, expect, it } from 'vitest';
import { SHARD_MESSAGE_MAX_BYTES } from '@orrery/core';
import { failureMessage, lastNonEmptyLine } from './run-message.js';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

describe('failureMessage', () => {
  it.each<[string, string, number | null, string | null, string]>([
    ['empty stderr: the exit code', '', 127, null, 'exit code 127'],
    ['blank stderr: the exit code', '\n  \n\t\n', 1, null, 'exit code 1'],
    ['empty stderr, killed: the signal', '', null, 'SIGKILL', 'killed by SIGKILL'],
    ['one line', 'sh: 1: foo: not found\n', 127, null, 'sh: 1: foo: not found'],
    ['multi-line: the last non-empty line', 'token=s3cr3t-1-value\nwarming up\nfatal: upstream said no  \n\n', 1, null, 'fatal: upstream said no'],
    ['CRLF lines', 'first\r\nsecond\r\n', 1, null, 'second'],
    ['a line without a newline at the end', 'a\nb', 2, null, 'b'],
    ['killed, with stderr: the line', 'Terminated\n', null, 'SIGTERM', 'Terminated'],
    ['leading blanks are kept', '  at main (x.js:1:1)\n', 1, null, '  at main (x.js:1:1)'],
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
    expect(line.startsWith(message.slice(0, -1))).toBe(true);
  });
});

describe('lastNonEmptyLine', () => {
  it.each<[string, string]>([
    ['', ''],
    ['\n', ''],
    ['x', 'x'],
    ['x\n\n', 'x'],
    ['x\ny \n', 'y'],
  ])('%j → %j', (text, expected) => {
    expect(lastNonEmptyLine(text)).toBe(expected);
  });
});
