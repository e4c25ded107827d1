import { defineJob } from '@orrery/executor';

// Blocks its event loop and ignores ctx.signal: only a kill stops it.
export default defineJob({
  name: 'ignores-signal',
  run() {
    const until = Date.now() + 120_000;
    while (Date.now() < until) {
      // busy
    }
  },
});
