import { describe, expect, it } from 'vitest';
import { EXECUTOR_USAGE, parseExecutorConfig } from './config.js';

const parse = (argv: string[], env: Record<string, string> = {}) => parseExecutorConfig(['--namespace', 'ns', '--name', 'e1', ...argv], env);

describe('--secret-env', () => {
  it.each<[string, string[], Record<string, string>, string[]]>([
    ['none', [], {}, []],
    ['the flag', ['--secret-env', 'DB_PASSWORD,AWS_*'], {}, ['DB_PASSWORD', 'AWS_*']],
    ['the environment', [], { ORRERY_SECRET_ENV: 'DB_PASSWORD' }, ['DB_PASSWORD']],
    ['both count (a flag never unhides)', ['--secret-env', 'A'], { ORRERY_SECRET_ENV: 'B,A' }, ['A', 'B']],
  ])('%s', (_label, argv, env, expected) => {
    const config = parse(argv, env);
    expect(config.secretEnv).toEqual(expected);
    expect(Object.isFrozen(config.secretEnv)).toBe(true);
  });

  it('lists every bad entry at once, naming where it came from', () => {
    expect(() => parse(['--secret-env', '*,OK,A-B'], { ORRERY_SECRET_ENV: '9X' })).toThrow(expect.objectContaining({
      code: 'usage',
      message: "--secret-env: '*' must be a variable name or a name prefix followed by * (like AWS_*); --secret-env: 'A-B' must be a variable name or a name prefix followed by * (like AWS_*); ORRERY_SECRET_ENV: '9X' must be a variable name or a name prefix followed by * (like AWS_*)",
    }));
  });

  it('is in the usage text', () => {
    expect(EXECUTOR_USAGE).toContain('--secret-env NAME[,NAME…]');
    expect(EXECUTOR_USAGE).toContain('ORRERY_SECRET_ENV');
  });
});

describe('--name and --namespace', () => {
  it.each([
    ['--name', ['--name', '__proto__']],
    ['--name', ['--name', '..']],
    ['--namespace', ['--namespace', '__proto__']],
  ])('refuses %s %s', (field, argv) => {
    expect(() => parse(argv)).toThrow(expect.objectContaining({
      code: 'usage',
      message: expect.stringContaining(`${field}: '${argv[1]}' must match`),
    }));
  });
});
