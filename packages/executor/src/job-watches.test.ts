// A job's watches on the real ZooKeeper of the test run, through a client that notes the paths of
// its creates: the commands folder is listed as it is, made only when a listing finds it missing,
// and never made under a job that is gone.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { commandName, createEmitter, createMetrics, createZkClient, encodeJson, parseJobConfig, paths, type ZkClient } from '@orrery/core';
import { eventually, notingCreates, uniqueRoot } from '@orrery/core/testing';
import type { ExecutorEvents } from './executor-events.js';
import { createExecutorMetrics } from './executor-metrics.js';
import { createJobWatches, type JobWatches } from './job-watches.js';

const zkConnect = inject('zkConnect');
const root = uniqueRoot('job-watches');
const NS = 'jw';

let real: ZkClient;
/** `real`, with the paths of its creates noted in {@link created}. */
let zk: ZkClient;
let created: string[];
const open: JobWatches[] = [];

beforeAll(async () => {
  real = createZkClient({ connect: zkConnect, root });
  await real.start();
  await real.mkdirp(paths.jobs(NS));
  ({ zk, created } = notingCreates(real));
});

afterAll(async () => {
  for (const w of open) w.close();
  await real?.close();
});

/** Watches `job` (a follower's: it prunes nothing); resolves with the command names it is handed. */
function watch(job: string, onConfig: (present: boolean) => void = () => undefined): string[] {
  const commands: string[] = [];
  const w = createJobWatches({
    zk, namespace: NS, job, logger: pino({ level: 'silent' }), emitter: createEmitter<ExecutorEvents>(),
    metrics: createExecutorMetrics(createMetrics({ processMetrics: false })), startedAt: Date.now(),
    isLeader: () => false, onConfig: (config) => onConfig(config !== undefined), onApplied: () => undefined,
    onCommand: (name) => commands.push(name),
  });
  open.push(w);
  w.watchAll();
  return commands;
}

const writeJob = (job: string) => real.create(paths.job(NS, job), encodeJson(parseJobConfig({ name: job, type: 'shell', command: 'true', cron: '0 0 1 1 *', enabled: true })));
const runNow = (job: string) => real.create(paths.jobCommand(NS, job, commandName.sequential()), encodeJson({ kind: 'run', requestedAt: Date.now() }), 'persistent-sequential');

describe('the commands folder', () => {
  it('is listed as it is when it exists: no create of it is sent', async () => {
    const job = 'has-folder';
    await writeJob(job);
    await real.create(paths.jobCommands(NS, job));
    created.length = 0;
    const commands = watch(job);
    await runNow(job);
    await eventually(() => expect(commands).toHaveLength(1), { timeoutMs: 10_000 });
    expect(created.filter((p) => p.startsWith(paths.job(NS, job)))).toEqual([]);
  });

  it('is made when a listing finds it missing, and its commands are then seen', async () => {
    const job = 'no-folder';
    await writeJob(job);
    created.length = 0;
    const commands = watch(job);
    await eventually(async () => expect(await real.exists(paths.jobCommands(NS, job))).not.toBeNull(), { timeoutMs: 10_000 });
    expect(created.filter((p) => p === paths.jobCommands(NS, job))).toHaveLength(1);
    await runNow(job);
    await eventually(() => expect(commands).toHaveLength(1), { timeoutMs: 10_000 });
  });

  it('is never made under a job that is gone, and the job is not brought back', async () => {
    const job = 'deleted';
    created.length = 0;
    let gone = false;
    watch(job, (present) => { gone = !present; });
    await eventually(() => {
      expect(gone).toBe(true);
      expect(created).toContain(paths.jobCommands(NS, job));
    }, { timeoutMs: 10_000 });
    expect(await real.exists(paths.job(NS, job))).toBeNull();
  });
});
