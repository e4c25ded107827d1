import { describe, expect, it } from 'vitest';
import { decideOverlap, queueSlot, type OverlapDecision, type OverlapPolicy, type OverlapSituation } from './overlap-policy.js';
import type { Trigger } from './misfire-rule.js';

const policies: OverlapPolicy[] = ['skip', 'queue', 'replace'];
const triggers: Trigger[] = ['cron', 'misfire', 'retry', 'run-now', 'downstream', 'failover'];
const situations: OverlapSituation[] = ['idle', 'running-here', 'running-elsewhere'];

/** The whole table, written out: policy → trigger → situation → decision. */
const table: Record<OverlapPolicy, Record<Trigger, Record<OverlapSituation, OverlapDecision>>> = {
  skip: {
    cron: { idle: 'run', 'running-here': 'skip', 'running-elsewhere': 'skip' },
    misfire: { idle: 'run', 'running-here': 'skip', 'running-elsewhere': 'skip' },
    retry: { idle: 'run', 'running-here': 'skip', 'running-elsewhere': 'skip' },
    'run-now': { idle: 'run', 'running-here': 'queue', 'running-elsewhere': 'wait' },
    downstream: { idle: 'run', 'running-here': 'queue', 'running-elsewhere': 'wait' },
    failover: { idle: 'run', 'running-here': 'queue', 'running-elsewhere': 'skip' },
  },
  queue: {
    cron: { idle: 'run', 'running-here': 'queue', 'running-elsewhere': 'wait' },
    misfire: { idle: 'run', 'running-here': 'queue', 'running-elsewhere': 'wait' },
    retry: { idle: 'run', 'running-here': 'queue', 'running-elsewhere': 'wait' },
    'run-now': { idle: 'run', 'running-here': 'queue', 'running-elsewhere': 'wait' },
    downstream: { idle: 'run', 'running-here': 'queue', 'running-elsewhere': 'wait' },
    failover: { idle: 'run', 'running-here': 'queue', 'running-elsewhere': 'skip' },
  },
  replace: {
    cron: { idle: 'run', 'running-here': 'replace', 'running-elsewhere': 'wait' },
    misfire: { idle: 'run', 'running-here': 'replace', 'running-elsewhere': 'wait' },
    retry: { idle: 'run', 'running-here': 'replace', 'running-elsewhere': 'wait' },
    'run-now': { idle: 'run', 'running-here': 'queue', 'running-elsewhere': 'wait' },
    downstream: { idle: 'run', 'running-here': 'queue', 'running-elsewhere': 'wait' },
    failover: { idle: 'run', 'running-here': 'queue', 'running-elsewhere': 'skip' },
  },
};

describe('the overlap rule', () => {
  const cases = policies.flatMap((p) => triggers.flatMap((t) => situations.map((s) => [p, t, s, table[p][t][s]] as const)));
  it.each(cases)('%s, %s, %s → %s', (policy, trigger, situation, expected) => {
    expect(decideOverlap(policy, trigger, situation)).toBe(expected);
  });

  it('never drops a requested run because its item is busy', () => {
    for (const p of policies) for (const t of ['run-now', 'downstream'] as const) for (const s of situations) expect(decideOverlap(p, t, s)).not.toBe('skip');
  });

  it.each([
    ['cron', 'scheduled'], ['misfire', 'scheduled'], ['retry', 'scheduled'],
    ['run-now', 'requested'], ['downstream', 'requested'], ['failover', 'requested'],
  ] as const)('a waiting %s fire takes the %s slot', (trigger, slot) => {
    expect(queueSlot(trigger)).toBe(slot);
  });
});
