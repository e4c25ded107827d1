import { describe, expect, it } from 'vitest';
import { BUILT_IN_SECRET_ENV, isSecretEnv, jobEnvironment, parseSecretEnv, redactSecrets, secretValues } from './job-env.js';

const base = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/orrery',
  LANG: 'C.UTF-8',
  ORRERY_ZK: '127.0.0.1:2181',
  ORRERY_CLUSTER_TOKEN: 'cluster-secret',
  ORRERY_ZK_AUTH: 'orrery:zk-secret',
  ORRERY_ADMIN_PASSWORD: 'admin-secret',
  DB_PASSWORD: 'db-secret',
  AWS_ACCESS_KEY_ID: 'AKIA',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  AWSOME: 'not aws',
  UNSET: undefined,
};
const contract = { ORRERY_JOB: 'j', ORRERY_SHARD_ITEM: '2', ORRERY_RESULT_FILE: '/tmp/r.json' };

describe('jobEnvironment', () => {
  it.each<[string, readonly string[], Record<string, string>, string[], string[]]>([
    // label, secrets, contract, names kept, names dropped
    ['built-in secrets are always dropped', [], {}, ['PATH', 'HOME', 'LANG', 'ORRERY_ZK', 'DB_PASSWORD', 'AWS_SECRET_ACCESS_KEY', 'AWSOME'], [...BUILT_IN_SECRET_ENV, 'UNSET']],
    ['a named secret is dropped', ['DB_PASSWORD'], {}, ['PATH', 'AWS_ACCESS_KEY_ID'], ['DB_PASSWORD', 'ORRERY_CLUSTER_TOKEN']],
    ['a prefix pattern drops its family only', ['AWS_*'], {}, ['AWSOME', 'DB_PASSWORD'], ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']],
    ['a name is not a prefix', ['AWS_'], {}, ['AWS_ACCESS_KEY_ID'], []],
    ['a secret that is not set changes nothing', ['NOT_SET'], {}, ['PATH', 'DB_PASSWORD'], ['ORRERY_ZK_AUTH']],
    ['the contract is added', [], contract, ['PATH', 'ORRERY_JOB', 'ORRERY_SHARD_ITEM', 'ORRERY_RESULT_FILE'], ['ORRERY_CLUSTER_TOKEN']],
    ['the contract wins over a pattern that matches it', ['ORRERY_*'], contract, ['ORRERY_JOB', 'ORRERY_RESULT_FILE'], ['ORRERY_ZK', 'ORRERY_CLUSTER_TOKEN']],
  ])('%s', (_label, secrets, extra, kept, dropped) => {
    const env = jobEnvironment(base, secrets, extra);
    for (const name of kept) expect(env, name).toHaveProperty(name);
    for (const name of dropped) expect(env, name).not.toHaveProperty(name);
    for (const [name, value] of Object.entries(extra)) expect(env[name]).toBe(value);
    expect(Object.values(env).join('\n')).not.toMatch(/cluster-secret|zk-secret|admin-secret/);
  });

  it('lets the contract win over the base, and the base is not changed', () => {
    const copy = { ...base };
    const env = jobEnvironment({ ...base, ORRERY_JOB: 'spoofed' }, [], { ORRERY_JOB: 'real' });
    expect(env.ORRERY_JOB).toBe('real');
    expect(base).toEqual(copy);
  });

  it('a contract variable named like a built-in secret is the contract\'s (the executor never sets one)', () => {
    expect(jobEnvironment(base, [], { ORRERY_CLUSTER_TOKEN: 'given' }).ORRERY_CLUSTER_TOKEN).toBe('given');
  });
});

describe('isSecretEnv', () => {
  it.each<[string, readonly string[], boolean]>([
    ['ORRERY_CLUSTER_TOKEN', [], true],
    ['ORRERY_ZK_AUTH', [], true],
    ['ORRERY_ADMIN_PASSWORD', [], true],
    ['ORRERY_ZK', [], false],
    ['orrery_cluster_token', [], false], // names are case-sensitive, as the kernel's
    ['DB_PASSWORD', ['DB_PASSWORD'], true],
    ['DB_PASSWORD_FILE', ['DB_PASSWORD'], false],
    ['DB_PASSWORD_FILE', ['DB_*'], true],
    ['DB', ['DB_*'], false],
  ])('%s with %j → %s', (name, secrets, expected) => {
    expect(isSecretEnv(name, secrets)).toBe(expected);
  });
});

describe('parseSecretEnv', () => {
  it.each<[string, string[]]>([
    ['', []],
    ['DB_PASSWORD', ['DB_PASSWORD']],
    [' DB_PASSWORD , AWS_* ,,', ['DB_PASSWORD', 'AWS_*']],
    ['A,A', ['A']],
    ['_private', ['_private']],
  ])('%j → %j', (input, expected) => {
    expect(parseSecretEnv(input)).toEqual({ names: expected, issues: [] });
  });

  it.each<[string, string]>([
    ['*', "'*'"],
    ['A*B', "'A*B'"],
    ['1ABC', "'1ABC'"],
    ['DB-PASS', "'DB-PASS'"],
    ['A=B', "'A=B'"],
    ['GOOD,**', "'**'"],
  ])('refuses %j naming the field, the rule and the entry', (input, entry) => {
    const { issues } = parseSecretEnv(input, 'ORRERY_SECRET_ENV');
    expect(issues).toEqual([{
      field: 'ORRERY_SECRET_ENV',
      rule: 'pattern',
      message: `ORRERY_SECRET_ENV: ${entry} must be a variable name or a name prefix followed by * (like AWS_*)`,
    }]);
  });
});

describe('redacting secret values from a message', () => {
  const base = { ORRERY_CLUSTER_TOKEN: 'cluster-token-123', DB_PASSWORD: 'hunter2-long', AWS_KEY: 'akia-123456', SHORT: 'x', PATH: '/usr/bin', FLAG: '1' };
  it.each([
    ['fatal: token cluster-token-123 refused', 'fatal: token [redacted] refused'],
    ['db hunter2-long / hunter2-long', 'db [redacted] / [redacted]'],
    ['key akia-123456', 'key [redacted]'],
    ['path /usr/bin and flag 1 stay', 'path /usr/bin and flag 1 stay'],
    ['nothing secret here', 'nothing secret here'],
  ])('%j → %j', (text, expected) => {
    expect(redactSecrets(text, secretValues(base, ['DB_PASSWORD', 'AWS_*']))).toBe(expected);
  });
  it('takes only the hidden variables, long enough to be secrets, longest first', () => {
    expect(secretValues({ ...base, ORRERY_ZK_AUTH: 'u:abc' }, ['DB_PASSWORD', 'SHORT'])).toEqual(['cluster-token-123', 'hunter2-long']);
  });
});
