import { describe, expect, it } from 'vitest';
import { JOB_CONFIG_MAX_BYTES, checkJobConfig, diffJobConfig, jobSetIssues, parseJobConfig, utf8Length, type JobConfig } from './job-config.js';
import { jobConfigOfSize } from '../testing/job-of-size.js';
import { checkNamespaceInfo } from './namespace.js';
import { checkExecutorInfo, checkExecutorMeta } from './executor.js';
import { checkAssignment } from './assignment.js';
import { checkShardState } from './shard.js';

const shell = { name: 'backup', type: 'shell', command: 'echo hi' } as const;

describe('JobConfig defaults', () => {
  it('fills every default', () => {
    expect(parseJobConfig(shell)).toEqual({
      name: 'backup',
      description: '',
      type: 'shell',
      command: 'echo hi',
      timeZone: 'UTC',
      shardingTotalCount: 1,
      shardingItemParameters: {},
      jobParameter: '',
      localMode: false,
      loadLevel: 1,
      preferList: [],
      useDispreferList: true,
      timeoutSeconds: 0,
      enabled: false,
      failover: true,
      pausePeriodDate: '',
      pausePeriodTime: '',
      overlap: 'skip',
      misfire: { policy: 'fire-once', thresholdSeconds: 5 },
      retry: { count: 0, backoffSeconds: 0 },
      downstream: [],
      groups: [],
      alarm: { onFailure: true, onTimeout: true },
    });
  });

  it('defaults failover to false in localMode', () => {
    expect(parseJobConfig({ ...shell, localMode: true }).failover).toBe(false);
  });

  it("accepts Saturn's item-parameter and preferList strings", () => {
    const c = parseJobConfig({ ...shell, shardingTotalCount: 3, shardingItemParameters: '0=beijing, 1=shanghai,2=a=b', preferList: 'exec-1, @gpu' });
    expect(c.shardingItemParameters).toEqual({ 0: 'beijing', 1: 'shanghai', 2: 'a=b' });
    expect(c.preferList).toEqual(['exec-1', '@gpu']);
  });

  it('treats an empty cron as a passive job', () => {
    expect(parseJobConfig({ ...shell, cron: '' }).cron).toBeUndefined();
  });

  it('accepts a full node job', () => {
    const c = parseJobConfig({
      name: 'report', type: 'node', handler: 'daily-report', cron: '0 30 2 * * *', timeZone: 'Europe/Berlin',
      shardingTotalCount: 4, shardingItemParameters: { 0: 'a', 3: 'd' }, overlap: 'queue',
      misfire: { policy: 'skip' }, retry: { count: 2, backoffSeconds: 10 }, downstream: ['other'],
      alarm: { webhook: 'https://hooks.example/x' }, pausePeriodDate: '12/24-12/26', pausePeriodTime: '23:00-01:00',
    });
    expect(c.misfire).toEqual({ policy: 'skip', thresholdSeconds: 5 });
    expect(c.alarm).toEqual({ webhook: 'https://hooks.example/x', onFailure: true, onTimeout: true });
  });
});

describe('JobConfig rules: each error names the field and the rule', () => {
  it.each<[string, Record<string, unknown>, string, string]>([
    ['not an object', null as unknown as Record<string, unknown>, '', 'type'],
    ['unknown field', { ...shell, shardCount: 3 }, 'shardCount', 'unknown-field'],
    ['unknown nested field', { ...shell, misfire: { policy: 'skip', grace: 1 } }, 'misfire.grace', 'unknown-field'],
    ['missing name', { type: 'shell', command: 'x' }, 'name', 'required'],
    ['bad name', { ...shell, name: 'a b' }, 'name', 'pattern'],
    ['long name', { ...shell, name: 'x'.repeat(65) }, 'name', 'pattern'],
    ['the name __proto__', { ...shell, name: '__proto__' }, 'name', 'pattern'],
    ['the handler __proto__', { name: 'a', type: 'node', handler: '__proto__' }, 'handler', 'pattern'],
    ['__proto__ downstream', { ...shell, downstream: ['__proto__'] }, 'downstream[0]', 'pattern'],
    ['bad type', { ...shell, type: 'java' }, 'type', 'one-of'],
    ['shell without command', { name: 'a', type: 'shell' }, 'command', 'required'],
    ['node without handler', { name: 'a', type: 'node' }, 'handler', 'required'],
    ['shell with handler', { ...shell, handler: 'x' }, 'handler', 'not-allowed'],
    ['node with command', { name: 'a', type: 'node', handler: 'h', command: 'x' }, 'command', 'not-allowed'],
    ['cron with 4 fields', { ...shell, cron: '* * * *' }, 'cron', 'cron'],
    ['cron out of range', { ...shell, cron: '0 61 * * *' }, 'cron', 'cron'],
    ['unknown time zone', { ...shell, timeZone: 'Europe/Atlantis' }, 'timeZone', 'time-zone'],
    ['zero shards', { ...shell, shardingTotalCount: 0 }, 'shardingTotalCount', 'minimum'],
    ['fractional shards', { ...shell, shardingTotalCount: 1.5 }, 'shardingTotalCount', 'type'],
    ['item key out of range', { ...shell, shardingTotalCount: 2, shardingItemParameters: { 2: 'x' } }, 'shardingItemParameters.2', 'item-range'],
    ['item key not a number', { ...shell, shardingItemParameters: { a: 'x' } }, 'shardingItemParameters.a', 'item-range'],
    ['item string malformed', { ...shell, shardingItemParameters: '0:a' }, 'shardingItemParameters', 'format'],
    ['load level 0', { ...shell, loadLevel: 0 }, 'loadLevel', 'minimum'],
    ['bad prefer entry', { ...shell, preferList: ['ok', 'not ok'] }, 'preferList[1]', 'pattern'],
    ['duplicate prefer entries', { ...shell, preferList: ['a', 'a'] }, 'preferList', 'unique-items'],
    ['negative timeout', { ...shell, timeoutSeconds: -1 }, 'timeoutSeconds', 'minimum'],
    ['enabled not boolean', { ...shell, enabled: 'yes' }, 'enabled', 'type'],
    ['failover in localMode', { ...shell, localMode: true, failover: true }, 'failover', 'local-mode'],
    ['bad pause date', { ...shell, pausePeriodDate: '13/01-13/02' }, 'pausePeriodDate', 'format'],
    ['bad pause time', { ...shell, pausePeriodTime: '25:00-26:00' }, 'pausePeriodTime', 'format'],
    ['bad overlap', { ...shell, overlap: 'wait' }, 'overlap', 'one-of'],
    ['bad misfire policy', { ...shell, misfire: { policy: 'always' } }, 'misfire.policy', 'one-of'],
    ['negative misfire threshold', { ...shell, misfire: { thresholdSeconds: -5 } }, 'misfire.thresholdSeconds', 'minimum'],
    ['negative retries', { ...shell, retry: { count: -1 } }, 'retry.count', 'minimum'],
    ['own downstream', { ...shell, downstream: ['backup'] }, 'downstream', 'self-reference'],
    ['bad downstream name', { ...shell, downstream: ['a/b'] }, 'downstream[0]', 'pattern'],
    ['bad webhook', { ...shell, alarm: { webhook: 'ftp://x' } }, 'alarm.webhook', 'url'],
  ])('%s', (_label, input, field, rule) => {
    const result = checkJobConfig(input);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toContainEqual(expect.objectContaining({ field, rule }));
    const found = result.issues.find((i) => i.field === field && i.rule === rule)!;
    if (field) expect(found.message).toContain(field);
  });

  it('lists every problem at once', () => {
    const result = checkJobConfig({ ...shell, shardingTotalCount: 2, shardingItemParameters: { 5: 'x' }, timeZone: 'Nowhere', cron: 'nope', downstream: ['backup'] });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.map((i) => i.rule).sort()).toEqual(['cron', 'item-range', 'self-reference', 'time-zone']);
  });

  it('throws a validation OrreryError with the issues', () => {
    expect(() => parseJobConfig({ ...shell, loadLevel: 0 })).toThrow(expect.objectContaining({ code: 'validation', message: expect.stringContaining("job 'backup'") }));
  });
});

describe('job sets and diffs', () => {
  const job = (name: string, downstream: string[] = []): JobConfig => parseJobConfig({ ...shell, name, downstream });
  it('finds duplicate names and downstream cycles', () => {
    expect(jobSetIssues([job('a', ['b']), job('b', ['c']), job('c')])).toEqual([]);
    expect(jobSetIssues([job('a'), job('a')])).toContainEqual(expect.objectContaining({ field: 'jobs[1].name', rule: 'unique' }));
    const cycle = jobSetIssues([job('a', ['b']), job('b', ['a'])]);
    expect(cycle).toContainEqual(expect.objectContaining({ rule: 'cycle', message: expect.stringContaining('a → b → a') }));
  });
  it('diffs field by field, ignoring key order', () => {
    const a = job('a');
    const b = { ...a, misfire: { thresholdSeconds: 5, policy: 'fire-once' as const }, cron: '* * * * *' };
    expect(diffJobConfig(a, b)).toEqual([{ field: 'cron', before: undefined, after: '* * * * *' }]);
  });
});

describe('other schemas', () => {
  it.each<[string, (i: unknown) => { ok: boolean; issues?: Array<{ field: string; rule: string }> }, unknown, string | null, string | null]>([
    ['namespace defaults', checkNamespaceInfo, {}, null, null],
    ['namespace bad webhook', checkNamespaceInfo, { alarm: { webhook: 'nope' } }, 'alarm.webhook', 'url'],
    ['namespace unknown field', checkNamespaceInfo, { owner: 'x' }, 'owner', 'unknown-field'],
    ['executor info ok', checkExecutorInfo, { host: 'h', pid: 1, version: '0.1.0', startedAt: 1 }, null, null],
    ['executor info bad pid', checkExecutorInfo, { host: 'h', pid: 0, version: '0.1.0', startedAt: 1 }, 'pid', 'minimum'],
    ['executor info bad handler', checkExecutorInfo, { host: 'h', pid: 1, version: '1', startedAt: 1, handlers: ['a b'] }, 'handlers[0]', 'pattern'],
    ['executor meta ok', checkExecutorMeta, { noTraffic: true }, null, null],
    ['executor meta bad', checkExecutorMeta, { noTraffic: 'yes' }, 'noTraffic', 'type'],
    ['assignment ok', checkAssignment, { epoch: 3, allocatorEpoch: 77, items: { e1: [0, 2] }, unassigned: [{ item: 1, reason: 'all-drained' }] }, null, null],
    ['assignment bad reason', checkAssignment, { epoch: 3, allocatorEpoch: 77, items: {}, unassigned: [{ item: 1, reason: 'busy' }] }, 'unassigned[0].reason', 'one-of'],
    ['shard idle', checkShardState, { state: 'idle' }, null, null],
    ['shard running ok', checkShardState, { state: 'running', executor: 'e', session: 'abc', runId: 'r', fireTime: 1, startedAt: 1 }, null, null],
  ])('%s', (_label, check, input, field, rule) => {
    const result = check(input);
    expect(result.ok).toBe(field === null);
    if (field !== null) expect(result.issues).toContainEqual(expect.objectContaining({ field, rule }));
  });
});

describe('JobConfig size', () => {
  it(`accepts a config of exactly ${JOB_CONFIG_MAX_BYTES} bytes as stored, and refuses one byte more, naming the limit`, () => {
    const atLimit = checkJobConfig(jobConfigOfSize(JOB_CONFIG_MAX_BYTES, shell));
    expect(atLimit.ok).toBe(true);
    if (atLimit.ok) expect(Buffer.byteLength(JSON.stringify(atLimit.value))).toBe(JOB_CONFIG_MAX_BYTES);
    const over = checkJobConfig(jobConfigOfSize(JOB_CONFIG_MAX_BYTES + 1, shell));
    expect(over.ok).toBe(false);
    if (!over.ok) {
      expect(over.issues).toEqual([expect.objectContaining({ field: '', rule: 'max-size' })]);
      expect(over.issues[0]!.message).toContain(`the limit is ${JOB_CONFIG_MAX_BYTES} bytes`);
    }
  });
  it.each(['abc', 'é', '中文', '😀', 'a\uD800b'])('counts UTF-8 bytes of %j like Buffer does', (text) => {
    expect(utf8Length(text)).toBe(Buffer.byteLength(text));
  });
});
