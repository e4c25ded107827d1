import { defineJob } from '@orrery/executor';

// The benchmark's Node job: does nothing, so what is measured is the platform.
export default defineJob({
  name: 'noop',
  run() {
    return { message: 'ok' };
  },
});
