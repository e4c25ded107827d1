import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { matchPath, paths } from './layout.js';

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
    [paths.executors('ns'), { kind: 'executors', namespace: 'ns' }],
    [paths.executor('ns', 'host-1.dc'), { kind: 'executor', namespace: 'ns', executor: 'host-1.dc' }],
    [paths.executorPresence('ns', 'e'), { kind: 'executor-presence', namespace: 'ns', executor: 'e' }],
    [paths.executorMeta('ns', 'e'), { kind: 'executor-meta', namespace: 'ns', executor: 'e' }],
    [paths.executorAssignment('ns', 'e'), { kind: 'executor-assignment', namespace: 'ns', executor: 'e' }],
  ])('%s parses back', (path, match) => {
    expect(matchPath(path)).toEqual(match);
  });

  it.each(['/', '/other', '/namespaces/ns/other', '/namespaces/ns/jobs/j/unknown', '/namespaces/ns/jobs/j/shards/01', '/namespaces/ns/jobs/j/config/x/y', '/namespaces/../jobs'])(
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
  ])('refuses a name that would escape its place (%#)', (build) => {
    expect(build).toThrow(expect.objectContaining({ code: 'validation' }));
  });

  it('round-trips every valid job shard path (property)', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9_.-]{1,20}$/).filter((s) => s !== '.' && s !== '..'),
        fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/),
        fc.nat(99_999),
        (ns, job, item) => {
          expect(matchPath(paths.jobShard(ns, job, item))).toEqual({ kind: 'job-shard', namespace: ns, job, item });
        },
      ),
    );
  });
});
