// orrery-console's flags: --trust-proxy takes the proxies to believe — a hop count or their
// addresses — and refuses to trust whatever a client writes (bare, or `true`), naming the safer forms.
import { describe, expect, it } from 'vitest';
import { hasErrorCode } from '@orrery/core';
import { parseConsoleConfig, parseTrustProxy } from './config.js';

const parse = (...argv: string[]) => parseConsoleConfig(argv, {});
function usageError(argv: string[]): Error {
  let error: unknown;
  try {
    parse(...argv);
  } catch (e) {
    error = e;
  }
  expect(hasErrorCode(error, 'usage'), `${argv.join(' ')}: ${String(error)}`).toBe(true);
  return error as Error;
}

describe('--trust-proxy', () => {
  it.each([
    [[], false],
    [['--trust-proxy', '1'], 1],
    [['--trust-proxy=2'], 2],
    [['--trust-proxy', '10.0.0.5'], ['10.0.0.5']],
    [['--trust-proxy', '10.0.0.5, 10.0.1.0/24,fd00::/8,::1,loopback'], ['10.0.0.5', '10.0.1.0/24', 'fd00::/8', '::1', 'loopback']],
  ] as const)('%j → %j', (argv, expected) => {
    expect(parse(...argv).trustProxy).toEqual(expected);
  });

  it.each([
    [['--trust-proxy']],
    [['--trust-proxy', '--port', '80']],
    [['--trust-proxy', 'true']],
    [['--trust-proxy=TRUE']],
    [['--trust-proxy', '0']],
    [['--trust-proxy', '11']],
    [['--trust-proxy', '10.0.0.0/33']],
    [['--trust-proxy', 'proxy.example.com']],
    [['--trust-proxy', '10.0.0.5,,10.0.0.6']],
  ])('%j is a usage error naming the safer forms', (argv) => {
    const error = usageError([...argv]);
    expect(error.message).toContain('--trust-proxy 1');
    expect(error.message).toContain('--trust-proxy 10.0.0.5,10.0.1.0/24');
  });

  it('lists a bad --trust-proxy with the other problems at once', () => {
    const error = usageError(['--trust-proxy', 'yes', '--port', '99999']);
    expect(error.message).toMatch(/--port.*--trust-proxy|--trust-proxy.*--port/);
  });

  it('parseTrustProxy is pure and names the field', () => {
    expect(parseTrustProxy(undefined)).toEqual({ value: false });
    expect(parseTrustProxy('true')).toMatchObject({ issue: { field: '--trust-proxy', rule: 'trust-proxy' } });
  });
});
