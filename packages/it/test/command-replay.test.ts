// A run command is served once: an executor that gains a job reads the job's recent commands again
// (a request made just before it had the job must not be lost), but one the previous owner of the
// item already ran is not run a second time, and a stop from before it had the job stops nothing.
import { join } from 'node:path';
import { expect, inject, it } from 'vitest';
import { eventually } from '@orrery/core/testing';
import { useTwoExecutorCluster } from './executor-support.js';

const zkConnect = inject('zkConnect');
const cluster = useTwoExecutorCluster('command-replay', zkConnect);

it('an executor that gains a job does not run again a run-now its previous owner served', async () => {
  const c = cluster();
  const ledger = join(c.dir, 'replay.ledger');
  // On e1 while it is online (e2 only when e1 is not).
  await c.apply({ name: 'replay', enabled: true, type: 'shell', command: `echo "$ORRERY_FIRE_TIME $ORRERY_EXECUTOR" >> ${ledger}`, shardingTotalCount: 1, preferList: ['e1'], useDispreferList: true });
  await c.waitApplied('replay');
  expect((await c.cli('run', 'replay')).code).toBe(0);
  await eventually(() => expect(c.ledger(ledger)).toHaveLength(1), { timeoutMs: 15_000 });
  expect(c.ledger(ledger)[0]).toMatch(/ e1$/);
  // e1 leaves at once: the item moves to e2, whose new runtime reads the job's recent commands
  // again (whether it has the item when it reads them or gains it just after, it must not run the
  // served request a second time).
  const e2 = c.executors.get('e2')!;
  const gained = e2.waitForLine(/"items":\[0\],"msg":"items changed"/, 20_000);
  await c.executors.get('e1')!.stop(3000);
  await gained;
  // e2 has the job now and runs a new request of it: the run-now was served once, not lost.
  expect((await c.cli('run', 'replay')).code).toBe(0);
  await eventually(() => expect(c.ledger(ledger)).toHaveLength(2), { timeoutMs: 15_000 });
  expect(c.ledger(ledger)[1]).toMatch(/ e2$/);
  expect(new Set(c.ledger(ledger).map((l) => l.split(' ')[0])).size).toBe(2);
});
