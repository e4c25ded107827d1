import { defineJob } from '@orrery/executor';

// Prints its whole process.env as one line of JSON (job-secrets.test.ts looks for secrets in it).
export default defineJob({
  name: 'print-env',
  run(ctx) {
    ctx.log(JSON.stringify(process.env));
    return { message: 'printed' };
  },
});
