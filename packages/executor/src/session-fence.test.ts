import { describe, expect, it } from 'vitest';
import { fenceTiming } from './session-fence.js';

describe('fence timing (the self-fencing rule)', () => {
  it.each([
    // session timeout, kill grace → probe every, margin, grace
    { t: 10_000, kill: 5000, probe: 2000, margin: 1000, grace: 2000 },
    { t: 3000, kill: 1000, probe: 600, margin: 300, grace: 600 },
    { t: 2000, kill: 5000, probe: 400, margin: 200, grace: 400 },
    { t: 1000, kill: 5000, probe: 200, margin: 100, grace: 200 },
    { t: 40_000, kill: 5000, probe: 2000, margin: 1000, grace: 5000 },
    { t: 10_000, kill: 0, probe: 2000, margin: 1000, grace: 100 },
  ])('T = $t ms, kill grace $kill ms: probe $probe, margin $margin, grace $grace', ({ t, kill, probe, margin, grace }) => {
    expect(fenceTiming(t, kill)).toEqual({ probeMs: probe, marginMs: margin, graceMs: grace });
  });

  it('stops every run before the session can expire, and leaves the deadline well ahead in steady state', () => {
    for (let t = 1000; t <= 60_000; t += 500) {
      for (const kill of [0, 1000, 5000, 30_000]) {
        const { probeMs, marginMs, graceMs } = fenceTiming(t, kill);
        // The last answered probe was sent at 0: the session lives until at least t. The guard
        // kills at t − margin, before it can expire; the executor stops runs at t − margin − grace.
        expect(t - marginMs).toBeLessThan(t);
        expect(t - marginMs - graceMs).toBeGreaterThan(0);
        // With probes answered every probeMs, the deadline is never closer than this: nothing fences without cause.
        expect(t - marginMs - graceMs - probeMs).toBeGreaterThanOrEqual(0.3 * t);
      }
    }
  });
});
