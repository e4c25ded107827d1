import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { commandName, matchPath, parseCommandName, paths } from './layout.js';

describe('layout', () => {
  it.each([
    [paths.namespaces(), { kind: 'namespaces' }],
    [paths.namespace('www.shop.com'), { kind: 'namespace', namespace: 'www.shop.com' }],
    [paths.jobs('ns'), { kind: 'jobs', namespace: 'ns' }],
    [paths.namespaceSharding('ns'), { kind: 'namespace-sharding', namespace: 'ns' }],
    [paths.job('ns', 'backup'), { kind: 'job', namespace: 'ns', job: 'backup' }],
    [paths.jobAssignment('ns', 'j'), { kind: 'job-assignment', namespace: 'ns', job: 'j' }],
    [paths.jobApplied('ns', 'j'), { kind: 'job-applied', namespace: 'ns', job: 'j' }],
    [paths.jobLeader('ns', 'j'), { kind: 'job-leader', namespace: 'ns', job: 'j' }],
    [`${paths.jobLeader('ns', 'j')}/latch-1-0000000001`, { kind: 'job-leader-node', namespace: 'ns', job: 'j', node: 'latch-1-0000000001' }],
    [paths.jobShards('ns', 'j'), { kind: 'job-shards', namespace: 'ns', job: 'j' }],
    [paths.jobShard('ns', 'j', 7), { kind: 'job-shard', namespace: 'ns', job: 'j', item: 7 }],
    [paths.jobCommands('ns', 'j'), { kind: 'job-commands', namespace: 'ns', job: 'j' }],
    [paths.jobCommand('ns', 'j', 'cmd-0000000012'), { kind: 'job-command', namespace: 'ns', job: 'j', node: 'cmd-0000000012', command: { form: 'sequential', sequence: 12 } }],
    [paths.jobCommand('ns', 'j', commandName.downstream('up-1', 1700000000000)), { kind: 'job-command', namespace: 'ns', job: 'j', node: 'downstream-up-1-1700000000000', command: { form: 'downstream', upstream: 'up-1', fireTime: 1700000000000 } }],
    [paths.jobCommand('ns', 'j', commandName.failover(2, 5)), { kind: 'job-command', namespace: 'ns', job: 'j', node: 'failover-2-5', command: { form: 'failover', item: 2, fireTime: 5 } }],
    [paths.jobCommand('ns', 'j', commandName.repair(0)), { kind: 'job-command', namespace: 'ns', job: 'j', node: 'repair-0', command: { form: 'repair', item: 0 } }],
    [paths.jobCommand('ns', 'j', 'hand made'), { kind: 'job-command', namespace: 'ns', job: 'j', node: 'hand made', command: undefined }],
    [paths.executors('ns'), { kind: 'executors', namespace: 'ns' }],
    [paths.executor('ns', 'host-1.dc'), { kind: 'executor', namespace: 'ns', executor: 'host-1.dc' }],
    [paths.executorPresence('ns', 'e'), { kind: 'executor-presence', namespace: 'ns', executor: 'e' }],
    [paths.executorMeta('ns', 'e'), { kind: 'executor-meta', namespace: 'ns', executor: 'e' }],
    [paths.executorAssignment('ns', 'e'), { kind: 'executor-assignment', namespace: 'ns', executor: 'e' }],
  ])('%s parses back', (path, match) => {
    expect(matchPath(path)).toEqual(match);
  });

  it.each(['/', '/other', '/namespaces/ns/other', '/namespaces/ns/jobs/j/unknown', '/namespaces/ns/jobs/j/shards/01', '/namespaces/ns/jobs/j/config/x/y', '/namespaces/../jobs', '/namespaces/__proto__', '/namespaces/ns/jobs/__proto__', '/namespaces/ns/jobs/__proto__/shards/0', '/namespaces/ns/executors/__proto__/presence'])(
    '%s is not an Orrery path',
    (path) => expect(matchPath(path)).toBeUndefined(),
  );

  it.each([
    () => paths.job('ns', 'a/b'),
    () => paths.job('ns', ''),
    () => paths.namespace('..'),
    () => paths.executor('ns', 'a b'),
    () => paths.jobShard('ns', 'j', -1),
    () => paths.jobShard('ns', 'j', 1.5),
    () => paths.jobCommand('ns', 'j', 'a/b'),
    () => paths.jobCommand('ns', 'j', '..'),
    () => paths.jobCommand('ns', 'j', ''),
    () => paths.jobCommand('ns', 'j', 'line\nbreak'),
    () => commandName.downstream('a/b', 1),
    () => commandName.downstream('up', -1),
    () => commandName.downstream('up', 1.5),
    () => commandName.failover(-1, 1),
    () => commandName.failover(0, Number.NaN),
    () => commandName.repair(0.5),
    // Keys of plain objects everywhere: `__proto__` would set a prototype instead (see layout.ts).
    () => paths.job('ns', '__proto__'),
    () => paths.namespace('__proto__'),
    () => paths.executor('ns', '__proto__'),
    () => paths.consoleUser('__proto__'),
  ])('refuses a name that would escape its place (%#)', (build) => {
    expect(build).toThrow(expect.objectContaining({ code: 'validation' }));
  });

  describe('command names', () => {
    it.each([
      [commandName.sequential(), undefined], // the prefix: ZooKeeper appends the sequence
      ['cmd-0000000000', { form: 'sequential', sequence: 0 }],
      ['cmd-2147483647', { form: 'sequential', sequence: 2147483647 }],
      ['cmd--2147483648', { form: 'sequential', sequence: -2147483648 }],
      [commandName.downstream('backup', 1700000000000), { form: 'downstream', upstream: 'backup', fireTime: 1700000000000 }],
      // Job names may hold '-' and digits: the fire time is after the last '-'.
      [commandName.downstream('a-1-2', 0), { form: 'downstream', upstream: 'a-1-2', fireTime: 0 }],
      [commandName.failover(7, 1700000000000), { form: 'failover', item: 7, fireTime: 1700000000000 }],
      [commandName.repair(99_999), { form: 'repair', item: 99_999 }],
      ['cmd-12', undefined],
      ['cmd-00000000011', undefined],
      ['downstream--5', undefined],
      ['downstream-up-05', undefined],
      ['downstream-up-', undefined],
      ['downstream-a/b-5', undefined],
      ['failover-1', undefined],
      ['failover-01-5', undefined],
      ['failover-x-5', undefined],
      ['repair-', undefined],
      ['repair-1-2', undefined],
      ['repair--1', undefined],
      ['run-now', undefined],
      ['', undefined],
    ])('%s parses as %j', (name, parts) => {
      expect(parseCommandName(name)).toEqual(parts);
    });

    it('round-trips every downstream and failover name (property)', () => {
      fc.assert(
        fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/).filter((s) => s !== '__proto__'), fc.nat(99_999), fc.maxSafeNat(), (job, item, fireTime) => {
          expect(parseCommandName(commandName.downstream(job, fireTime))).toEqual({ form: 'downstream', upstream: job, fireTime });
          expect(parseCommandName(commandName.failover(item, fireTime))).toEqual({ form: 'failover', item, fireTime });
          expect(parseCommandName(commandName.repair(item))).toEqual({ form: 'repair', item });
        }),
      );
    });
  });

  it('round-trips every valid job shard path (property)', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9_.-]{1,20}$/).filter((s) => s !== '.' && s !== '..' && s !== '__proto__'),
        fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/).filter((s) => s !== '__proto__'),
        fc.nat(99_999),
        (ns, job, item) => {
          expect(matchPath(paths.jobShard(ns, job, item))).toEqual({ kind: 'job-shard', namespace: ns, job, item });
        },
      ),
    );
  });
});
