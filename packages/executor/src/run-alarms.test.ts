// Run and failover alarms through core's alarm sender: the namespace's settings read from a real
// ZooKeeper, the alarms POSTed to a real node:http webhook.
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAlarmSender, createMetrics, createZkClient, encodeJson, parseJobConfig, paths, readMetric, silentLogger, type AlarmSender, type ShardOutcome, type ZkClient } from '@orrery/core';
import { eventually, uniqueRoot } from '@orrery/core/testing';
import { createRunAlarms } from './run-alarms.js';

const zkConnect = inject('zkConnect');
const NS = 'alarms';
let zk: ZkClient;
let url: string;
const received: Array<Record<string, unknown>> = [];
/** Statuses the webhook answers, in order; then 200. */
const answers: number[] = [];
const hook = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    received.push({ path: req.url, type: req.headers['content-type'], ...(JSON.parse(body) as Record<string, unknown>) });
    res.statusCode = answers.shift() ?? 200;
    res.end();
  });
});
const senders: AlarmSender[] = [];

beforeAll(async () => {
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(hook.address() as { port: number }).port}`;
  zk = createZkClient({ connect: zkConnect, root: uniqueRoot('run-alarms') });
  await zk.start();
  await zk.mkdirp(paths.namespace(NS));
});
afterAll(async () => {
  for (const s of senders) await s.close();
  await zk.close();
  hook.closeAllConnections();
  await new Promise<void>((r) => hook.close(() => r()));
});

const outcome = (status: ShardOutcome['status'], runId: string): ShardOutcome => ({
  status, exitCode: status === 'failed' ? 3 : null, startedAt: 1000, endedAt: 2000, durationMs: 1000, executor: 'e1', runId, fireTime: 1000, attempt: 1, fencingToken: 1, message: 'boom',
});

function setup() {
  const metrics = createMetrics({ processMetrics: false });
  const sender = createAlarmSender({ logger: silentLogger(), metrics, backoffBaseMs: 10 });
  senders.push(sender);
  const sent: string[] = [];
  const alarms = createRunAlarms({ zk, namespace: NS, executor: 'e1', logger: silentLogger(), sender, onSent: (job, kind) => sent.push(`${job}/${kind}`), now: () => Date.UTC(2030, 0, 1) });
  return { alarms, sender, sent, metrics };
}

describe('run alarms', () => {
  it('POSTs failed and timed-out runs to the job webhook, else the namespace one; once per job and kind per window; retries a 5xx', async () => {
    received.length = 0;
    await zk.set(paths.namespace(NS), encodeJson({ description: '', alarm: { webhook: `${url}/ns`, silenceSeconds: 600, retries: 2 }, createdAt: 0 }));
    const { alarms, sent, sender, metrics } = setup();
    const a = parseJobConfig({ name: 'a', type: 'shell', command: 'false', cron: '* * * * * *', shardingTotalCount: 1, enabled: true, alarm: { onFailure: true, onTimeout: true } });
    const b = parseJobConfig({ name: 'b', type: 'shell', command: 'false', cron: '* * * * * *', shardingTotalCount: 1, enabled: true, alarm: { onFailure: true, webhook: `${url}/job-b` } });
    const quiet = parseJobConfig({ name: 'quiet', type: 'shell', command: 'false', cron: '* * * * * *', shardingTotalCount: 1, enabled: true, alarm: { onFailure: false } });
    answers.push(503); // the first POST meets a webhook down for a moment
    alarms.runFailed(a, 0, outcome('failed', 'r1'));
    await eventually(() => expect(sent).toEqual(['a/run-failed']));
    alarms.runFailed(a, 1, outcome('failed', 'r2')); // the same job and kind: silenced
    alarms.runFailed(a, 0, outcome('timed-out', 'r3'));
    alarms.runFailed(b, 0, outcome('failed', 'r4'));
    alarms.runFailed(quiet, 0, outcome('failed', 'r5'));
    alarms.jobEvent('failover', 'a', { item: 0, fireTime: '2030-01-01T00:00:00.000Z', crashedExecutor: 'e2', crashedRunId: 'r0' });
    await eventually(() => expect([...sent].sort()).toEqual(['a/failover', 'a/run-failed', 'a/run-timed-out', 'b/run-failed']));
    await sender.idle();
    const byRun = (runId: string) => received.filter((r) => r.runId === runId);
    expect(byRun('r1')).toHaveLength(2); // retried after the 503
    expect(byRun('r1')[1]).toEqual({
      path: '/ns', type: 'application/json', kind: 'run-failed', namespace: NS, job: 'a', item: 0, executor: 'e1', status: 'failed', exitCode: 3, message: 'boom',
      fireTime: '1970-01-01T00:00:01.000Z', runId: 'r1', at: '2030-01-01T00:00:00.000Z',
    });
    expect(byRun('r2')).toEqual([]);
    expect(byRun('r3')).toMatchObject([{ path: '/ns', kind: 'run-timed-out', status: 'timed-out' }]);
    expect(byRun('r4')).toMatchObject([{ path: '/job-b', kind: 'run-failed', job: 'b' }]);
    expect(byRun('r5')).toEqual([]);
    expect(received.filter((r) => r.kind === 'failover')).toEqual([{
      path: '/ns', type: 'application/json', kind: 'failover', namespace: NS, job: 'a', executor: 'e1', item: 0, fireTime: '2030-01-01T00:00:00.000Z', crashedExecutor: 'e2', crashedRunId: 'r0', at: '2030-01-01T00:00:00.000Z',
    }]);
    expect(readMetric(await metrics.metrics(), 'orrery_alarm_retries_total')).toBe(1);
  });

  it('sends nothing without a webhook, and a 4xx once, not retried', async () => {
    received.length = 0;
    await zk.set(paths.namespace(NS), encodeJson({ description: '', alarm: { silenceSeconds: 0 }, createdAt: 0 }));
    const { alarms, sender, metrics } = setup();
    const a = parseJobConfig({ name: 'a', type: 'shell', command: 'false', cron: '* * * * * *', shardingTotalCount: 1, enabled: true, alarm: { onFailure: true } });
    alarms.runFailed(a, 0, outcome('failed', 'none'));
    await zk.set(paths.namespace(NS), encodeJson({ description: '', alarm: { webhook: `${url}/ns`, silenceSeconds: 0, retries: 3 }, createdAt: 0 }));
    answers.push(410);
    alarms.runFailed(a, 0, outcome('failed', 'gone'));
    await eventually(async () => expect(readMetric(await metrics.metrics(), 'orrery_alarms_failed_total', { reason: 'refused' })).toBe(1));
    await sender.idle();
    expect(received.map((r) => r.runId)).toEqual(['gone']);
  });
});
