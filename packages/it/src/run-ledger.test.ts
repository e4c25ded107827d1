import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLedger, ledgerCommand, parseLedger } from './run-ledger.js';

const ns = (ms: number): string => (BigInt(ms) * 1_000_000n).toString();
const start = (runId: string, o: { job?: string; item?: number; fire?: number; exec?: string; token?: number; trigger?: string; at: number }): string =>
  `START ${o.job ?? 'j'} ${o.item ?? 0} ${o.fire ?? 1000} ${o.exec ?? 'e1'} ${runId} ${o.token ?? 1} ${o.trigger ?? 'cron'} 1 ${ns(o.at)}`;
const tick = (runId: string, at: number, o: { job?: string; item?: number; fire?: number; exec?: string } = {}): string =>
  `TICK ${o.job ?? 'j'} ${o.item ?? 0} ${o.fire ?? 1000} ${o.exec ?? 'e1'} ${runId} ${ns(at)}`;
const end = (runId: string, at: number, o: { job?: string; item?: number; fire?: number; exec?: string } = {}): string =>
  `END ${o.job ?? 'j'} ${o.item ?? 0} ${o.fire ?? 1000} ${o.exec ?? 'e1'} ${runId} ${ns(at)}`;
const check = (lines: string[], ...rest: Parameters<typeof checkLedger> extends [unknown, ...infer R] ? R : never) => checkLedger(parseLedger(lines.join('\n')).runs, ...rest);

describe('run ledger checker', () => {
  it.each([
    {
      name: 'two runs one after the other: clean',
      lines: [start('a', { at: 1000 }), end('a', 1500), start('b', { fire: 2000, token: 2, at: 2000 }), end('b', 2400, { fire: 2000 })],
      overlaps: 0, duplicates: 0, failovers: 0, tokens: 0,
    },
    {
      name: 'a run still ticking when another starts: overlap',
      lines: [start('a', { at: 1000 }), tick('a', 2100), start('b', { fire: 2000, exec: 'e2', token: 2, at: 2000 }), end('b', 2500, { fire: 2000, exec: 'e2' })],
      overlaps: 1, duplicates: 0, failovers: 0, tokens: 0,
    },
    {
      name: 'a crashed run re-run by failover with a larger token, after its last tick: allowed',
      lines: [start('a', { at: 1000 }), tick('a', 1100), start('b', { exec: 'e2', token: 5, trigger: 'failover', at: 1600 }), end('b', 1900, { exec: 'e2' })],
      overlaps: 0, duplicates: 0, failovers: 1, tokens: 0,
    },
    {
      name: 'the same fire started twice by cron: duplicate',
      lines: [start('a', { at: 1000 }), end('a', 1100), start('b', { exec: 'e2', token: 2, at: 1200 }), end('b', 1300, { exec: 'e2' })],
      overlaps: 0, duplicates: 1, failovers: 0, tokens: 0,
    },
    {
      name: 'a failover re-run of a run that ended (its outcome was lost): allowed, counted',
      lines: [start('a', { at: 1000 }), end('a', 1100), start('b', { exec: 'e2', token: 2, trigger: 'failover', at: 1200 }), end('b', 1300, { exec: 'e2' })],
      overlaps: 0, duplicates: 0, failovers: 1, tokens: 0,
    },
    {
      name: 'a failover re-run with a smaller token: duplicate',
      lines: [start('a', { token: 5, at: 1000 }), tick('a', 1100), start('b', { exec: 'e2', token: 2, trigger: 'failover', at: 1200 }), end('b', 1300, { exec: 'e2' })],
      overlaps: 0, duplicates: 1, failovers: 0, tokens: 1,
    },
    {
      name: 'a later run with a smaller token: token violation',
      lines: [start('a', { token: 9, at: 1000 }), end('a', 1100), start('b', { fire: 2000, token: 3, at: 2000 }), end('b', 2100, { fire: 2000 })],
      overlaps: 0, duplicates: 0, failovers: 0, tokens: 1,
    },
    {
      name: 'different items may overlap',
      lines: [start('a', { at: 1000 }), tick('a', 3000), start('b', { item: 1, token: 2, at: 2000 }), end('b', 2500, { item: 1 })],
      overlaps: 0, duplicates: 0, failovers: 0, tokens: 0,
    },
  ])('$name', ({ lines, overlaps, duplicates, failovers, tokens }) => {
    const report = check(lines);
    expect(report.overlaps).toHaveLength(overlaps);
    expect(report.duplicates).toHaveLength(duplicates);
    expect(report.failoverReruns).toBe(failovers);
    expect(report.tokenViolations).toHaveLength(tokens);
  });

  it('counts missing fire times, and excuses those inside fault windows', () => {
    const lines = [start('a', { fire: 1000, at: 1000 }), start('b', { fire: 2000, token: 2, at: 2000 }), start('c', { fire: 2000, item: 1, token: 3, at: 2000 })];
    const report = check(lines, [{ job: 'j', items: 2, fireTimes: [1000, 2000, 3000] }], [[2500, 3500]]);
    expect(report.missed).toEqual([{ job: 'j', item: 1, fireTime: 1000 }]);
    expect(report.missedInFaults).toBe(2);
  });

  it('reads what the ledger job command writes from a real shell', () => {
    const ledger = join(mkdtempSync(join(tmpdir(), 'ledger-')), 'ledger.txt');
    const env = { ...process.env, ORRERY_JOB: 'job', ORRERY_SHARD_ITEM: '2', ORRERY_FIRE_TIME: '5000', ORRERY_EXECUTOR: 'e9', ORRERY_RUN_ID: 'r-1', ORRERY_FENCING_TOKEN: '77', ORRERY_TRIGGER: 'cron', ORRERY_ATTEMPT: '1' };
    execFileSync('/bin/sh', ['-c', ledgerCommand(ledger, 0.3)], { env });
    const { runs, badLines } = parseLedger(readFileSync(ledger, 'utf8'));
    expect(badLines).toBe(0);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ job: 'job', item: 2, fireTime: 5000, executor: 'e9', runId: 'r-1', token: 77, trigger: 'cron', attempt: 1, ended: true });
    expect(runs[0]!.lastSeen - runs[0]!.start).toBeGreaterThanOrEqual(250);
  });
});
