// The CLI's run views, pure parts: -f after `logs` means --follow (elsewhere --file), and times and
// durations as tables show them.
import { describe, expect, it } from 'vitest';
import { formatDuration, formatLocalTime, rewriteFollowFlag } from './run-commands.js';

describe('rewriteFollowFlag', () => {
  it.each([
    [['-n', 'ns', 'logs', 'job', 'run', '-f'], ['-n', 'ns', 'logs', 'job', 'run', '--follow']],
    [['--zk', 'h:1', '-n', 'logs', 'logs', 'j', 'r', '-f'], ['--zk', 'h:1', '-n', 'logs', 'logs', 'j', 'r', '--follow']],
    [['-n', 'ns', 'apply', '-f', 'logs'], ['-n', 'ns', 'apply', '-f', 'logs']],
    [['-n', 'ns', '-f', 'x.yaml', 'apply'], ['-n', 'ns', '-f', 'x.yaml', 'apply']],
    [[], []],
  ])('%j → %j', (argv, expected) => {
    expect(rewriteFollowFlag(argv)).toEqual(expected);
  });
});

describe('formats', () => {
  it('shows an instant in the given zone with its offset', () => {
    expect(formatLocalTime(Date.UTC(2026, 0, 15, 9, 0, 0), 'Europe/Berlin')).toBe('2026-01-15 10:00:00+01:00');
    expect(formatLocalTime(null)).toBe('');
  });
  it.each([[null, ''], [850, '850 ms'], [2100, '2.1 s'], [185_000, '3 min 5 s']] as const)('%s ms is %j', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
