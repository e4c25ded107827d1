import { describe, expect, it } from 'vitest';
import { checkJobConfig } from '@orrery/core';
import { SATURN_SHELL_COMMAND, fromSaturnExport } from './saturn-import.js';

/** A Saturn shell job as its console exports it (its field names, lists as comma-separated strings). */
const SATURN_SHELL = {
  jobName: 'settle-orders',
  jobType: 'SHELL_JOB',
  cron: '0 */5 * * * ?',
  shardingTotalCount: 2,
  shardingItemParameters: '0=/opt/settle.sh east,1=/opt/settle.sh west',
  jobParameter: '--batch 500',
  timeZone: 'Asia/Shanghai',
  loadLevel: 2,
  preferList: 'exec-1,exec-2',
  useDispreferList: false,
  localMode: false,
  timeoutSeconds: 600,
  pausePeriodDate: '12/31-12/31',
  pausePeriodTime: '23:00-23:59',
  downStream: 'report, archive',
  description: '结算订单',
  groups: 'finance',
  enabled: true,
  showNormalLog: true,
  timeout4AlarmSeconds: 300,
};

describe('fromSaturnExport', () => {
  it('carries a Saturn shell job over field by field; its item parameters stay its command lines', () => {
    const { document, refused, notes } = fromSaturnExport([SATURN_SHELL]);
    expect(refused).toEqual([]);
    expect(document.jobs).toEqual([{
      name: 'settle-orders', type: 'shell', enabled: false, command: SATURN_SHELL_COMMAND,
      cron: '0 */5 * * * ?', shardingTotalCount: 2, shardingItemParameters: { 0: '/opt/settle.sh east', 1: '/opt/settle.sh west' },
      jobParameter: '--batch 500', timeZone: 'Asia/Shanghai', loadLevel: 2, preferList: ['exec-1', 'exec-2'], useDispreferList: false,
      localMode: false, timeoutSeconds: 600, pausePeriodDate: '12/31-12/31', pausePeriodTime: '23:00-23:59',
      downstream: ['report', 'archive'], description: '结算订单', groups: ['finance'],
    }]);
    // What did not come over, each with why; and what changed.
    expect(notes.map((n) => `${n.field}: ${n.note.split(':')[0]}`)).toEqual([
      'showNormalLog: not carried over',
      'timeout4AlarmSeconds: not carried over',
      'shardingItemParameters: each item\'s parameter is its command line',
      'enabled: imported disabled',
    ]);
    // And it is a valid Orrery job.
    expect(checkJobConfig(document.jobs[0]).ok).toBe(true);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['a Java job', { jobName: 'j', jobType: 'JAVA_JOB', jobClass: 'com.x.Job' }, /Java class/],
    ['a passive Java job', { jobName: 'j', jobType: 'PASSIVE_JAVA_JOB' }, /Java class/],
    ['a message job', { jobName: 'j', jobType: 'MSG_JOB' }, /message queue/],
    ['an unknown type', { jobName: 'j', jobType: 'ROCKET' }, /jobType 'ROCKET' is not one Orrery can import/],
    ['no type', { jobName: 'j' }, /jobType '\(none\)'/],
    ['no name', { jobType: 'SHELL_JOB' }, /no jobName/],
    ['a name Orrery refuses', { jobName: 'has space', jobType: 'SHELL_JOB' }, /letters, digits, _ and -/],
  ])('refuses %s, saying why', (_label, job, reason) => {
    const { document, refused } = fromSaturnExport({ jobs: [job] });
    expect(document.jobs).toEqual([]);
    expect(refused).toEqual([{ job: expect.any(String), reason: expect.stringMatching(reason) }]);
  });

  it('a passive shell job has no cron (a cron it had is named); items without a parameter are named', () => {
    const { document, notes } = fromSaturnExport({ data: [{ jobName: 'p', jobType: 'PASSIVE_SHELL_JOB', cron: '0 0 * * * ?', shardingTotalCount: '3', shardingItemParameters: '0=echo a' }] });
    expect(document.jobs[0]).not.toHaveProperty('cron');
    expect(document.jobs[0]).toMatchObject({ shardingTotalCount: 3 });
    expect(notes.find((n) => n.field === 'cron')?.note).toMatch(/passive job runs only when triggered/);
    expect(notes.find((n) => n.field === 'shardingItemParameters')?.note).toMatch(/item\(s\) 1, 2 have none and will run nothing/);
  });

  it('a value of the wrong kind is named, not guessed', () => {
    const { document, notes } = fromSaturnExport([{ jobName: 'w', jobType: 'SHELL_JOB', cron: '0 * * * * ?', timeoutSeconds: 'soon', localMode: 'yes', shardingItemParameters: '0' }]);
    expect(document.jobs[0]).not.toHaveProperty('timeoutSeconds');
    expect(document.jobs[0]).not.toHaveProperty('localMode');
    expect(notes.filter((n) => n.note.startsWith('not carried over: "')).map((n) => n.field)).toEqual(['timeoutSeconds', 'localMode']);
    expect(notes.find((n) => n.field === 'shardingItemParameters')?.note).toMatch(/must be ITEM=VALUE/);
  });

  it.each([['a number', 42], ['an object without a list', { jobs: 'x' }], ['null', null]])('refuses a file that is %s', (_label, exported) => {
    expect(() => fromSaturnExport(exported)).toThrow(expect.objectContaining({ code: 'validation', message: expect.stringContaining('JSON list of Saturn job configs') }));
  });
});
