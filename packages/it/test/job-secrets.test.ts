// Jobs never see Orrery's secrets, and ZooKeeper never holds a job's output: real executor and
// allocator processes, a real ZooKeeper, every node under the test's root read back.
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  SHARD_MESSAGE_MAX_BYTES,
  checkAssignment,
  checkShardingState,
  createZkClient,
  encodeJson,
  parseJobConfig,
  paths,
  readJson,
  readShard,
  type JobConfigInput,
  type ShardOutcome,
  type ZkClient,
} from '@orrery/core';
import { eventually, freePort } from '@orrery/core/testing';
import { runCli } from '@orrery/console';
import { startProcess, stopAllProcesses, type RunningProcess } from '../src/index.js';
import { JOBS_DIR, NS, startCluster, type Cluster } from './executor-support.js';

const zkConnect = inject('zkConnect');
const unique = randomBytes(6).toString('hex');
// What the executor's environment holds: Orrery's secrets, two of the admin's, and an ordinary variable.
const secrets = {
  ORRERY_CLUSTER_TOKEN: `cluster-token-${unique}`,
  ORRERY_ZK_AUTH: `orrery:zk-password-${unique}`,
  ORRERY_ADMIN_PASSWORD: `admin-password-${unique}`,
  DB_PASSWORD: `db-password-${unique}`,
  AWS_SECRET_ACCESS_KEY: `aws-secret-${unique}`,
};
const ORDINARY = { ORRERY_IT_ORDINARY: `plain-${unique}` };

let c: Cluster;
/** Authenticated as the executor, allocator and CLI are: the executor's nodes carry Orrery's ACL. */
let zk: ZkClient;
let e1: RunningProcess & { port: number };
const alarms: string[] = [];
const hook = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.on('end', () => {
    alarms.push(body);
    res.end();
  });
});

beforeAll(async () => {
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const hookPort = (hook.address() as { port: number }).port;
  c = await startCluster('job-secrets', zkConnect, { alarm: { webhook: `http://127.0.0.1:${hookPort}/hook`, silenceSeconds: 1 } });
  zk = createZkClient({ connect: zkConnect, root: c.root, auth: secrets.ORRERY_ZK_AUTH });
  await zk.start();
  // As startCluster's startExecutor and startAllocator, with the secrets in the executor's
  // environment and the whole cluster on the same ZooKeeper credentials.
  const port = await freePort();
  const p = startProcess('orrery-executor', [
    '--zk', zkConnect, '--root', c.root, '--namespace', NS, '--name', 'e1', '--jobs', JOBS_DIR,
    '--data-dir', join(c.dir, 'e1'), '--http-port', String(port), '--http-host', '127.0.0.1', '--advertise-host', '127.0.0.1',
    '--session-timeout', '3', '--kill-grace', '1', '--secret-env', 'DB_PASSWORD,AWS_*',
  ], { ...secrets, ...ORDINARY });
  await p.waitForLine(/"executor started"/, 30_000);
  e1 = Object.assign(p, { port });
  const allocator = startProcess('orrery-sharding', [
    '--zk', zkConnect, '--root', c.root, '--http-port', String(await freePort()), '--http-host', '127.0.0.1', '--session-timeout', '3', '--debounce-ms', '100',
  ], { ORRERY_ZK_AUTH: secrets.ORRERY_ZK_AUTH });
  await allocator.waitForLine(/"allocator started"/);
  await eventually(async () => expect((await readJson(zk, paths.namespaceSharding(NS), checkShardingState))?.value.members).toEqual(['e1']), { timeoutMs: 20_000 });
});
afterAll(async () => {
  await stopAllProcesses();
  await zk?.close();
  await c?.close();
  hook.closeAllConnections();
  await new Promise<void>((r) => hook.close(() => r()));
});

const api = async (path: string): Promise<Response> =>
  fetch(`http://127.0.0.1:${e1.port}${path}`, { headers: { authorization: `Bearer ${secrets.ORRERY_CLUSTER_TOKEN}` } });

/** Applies an enabled passive job, runs it once (the CLI), and resolves its outcome once recorded. */
async function runOnce(input: JobConfigInput): Promise<ShardOutcome> {
  const config = parseJobConfig({ enabled: true, ...input });
  await zk.create(paths.job(NS, config.name), encodeJson(config));
  await eventually(async () => {
    const assignment = await readJson(zk, paths.jobAssignment(NS, config.name), checkAssignment);
    const applied = await readJson<{ epoch: number }>(zk, paths.jobApplied(NS, config.name));
    expect(assignment?.value.items).toEqual({ e1: [0] });
    expect(applied?.value.epoch).toBe(assignment!.value.epoch);
  }, { timeoutMs: 20_000 });
  let stderr = '';
  const code = await runCli(['--zk', zkConnect, '--root', c.root, '-n', NS, 'run', config.name], {
    stdout: { write: () => undefined }, stderr: { write: (t: string) => (stderr += t) }, env: { ORRERY_ZK_AUTH: secrets.ORRERY_ZK_AUTH },
  });
  expect(code, stderr).toBe(0);
  let last: ShardOutcome | undefined;
  await eventually(async () => {
    const shard = await readShard(zk, paths.jobShard(NS, config.name, 0));
    expect(shard?.state.state).toBe('idle');
    last = shard?.state.last;
    expect(last).toBeDefined();
  }, { timeoutMs: 20_000 });
  return last!;
}

/** A run's full log from the executor (its record is saved just after the outcome is recorded). */
async function log(runId: string, stream: 'stdout' | 'stderr'): Promise<string> {
  return eventually(async () => {
    const res = await api(`/runs/${runId}/log?stream=${stream}`);
    expect(res.status).toBe(200);
    return res.text();
  });
}

/** Every node under `path` (the client's root: the test's own), with its data as text. */
async function walk(zk: ZkClient, path = '/'): Promise<Array<{ path: string; data: string }>> {
  const { data } = await zk.get(path);
  const out = [{ path, data: data?.toString('utf8') ?? '' }];
  for (const child of await zk.getChildren(path)) out.push(...(await walk(zk, path === '/' ? `/${child}` : `${path}/${child}`)));
  return out;
}

describe('the environment of jobs', () => {
  it('a shell job running `env` sees ordinary variables and its contract, never a secret', async () => {
    const outcome = await runOnce({ name: 'shell-env', type: 'shell', command: 'env' });
    expect(outcome.status).toBe('succeeded');
    const out = await log(outcome.runId, 'stdout');
    expect(out).toContain(`ORRERY_IT_ORDINARY=${ORDINARY.ORRERY_IT_ORDINARY}\n`);
    expect(out).toContain('ORRERY_JOB=shell-env\n');
    expect(out).toContain(`ORRERY_RUN_ID=${outcome.runId}\n`);
    expect(out).toMatch(/^PATH=/m);
    for (const [name, value] of Object.entries(secrets)) {
      expect(out, name).not.toContain(value);
      expect(out, name).not.toMatch(new RegExp(`^${name}=`, 'm'));
    }
  });

  it('a Node job printing process.env (JSON) sees ordinary variables, never a secret', async () => {
    const outcome = await runOnce({ name: 'node-env', type: 'node', handler: 'print-env' });
    expect(outcome).toMatchObject({ status: 'succeeded', message: 'printed' });
    const out = await log(outcome.runId, 'stdout');
    // ctx.log lines start with their time and level (`2026-…Z info `): the JSON follows.
    const env = JSON.parse(out.trim().split('\n').at(-1)!.replace(/^\S+Z info /, '')) as Record<string, string>;
    expect(env.ORRERY_IT_ORDINARY).toBe(ORDINARY.ORRERY_IT_ORDINARY);
    expect(env.PATH).toBeTruthy();
    for (const [name, value] of Object.entries(secrets)) {
      expect(env, name).not.toHaveProperty(name);
      expect(out, name).not.toContain(value);
    }
  });
});

describe('ZooKeeper holds outcomes and a short message, never output', () => {
  it('a secret-looking line a job prints is on the executor, in no ZooKeeper node; the message is the last stderr line', async () => {
    // The value is made by the job (dash has no $RANDOM), so it is not in the job's config node either.
    const command = [
      'v="s3cr3t-$(od -An -N8 -tx1 /dev/urandom | tr -d \' \\n\')-value"',
      'echo "token=$v"',
      'echo "token=$v" >&2',
      'echo "fatal: the upstream refused the token" >&2',
      'exit 1',
    ].join('; ');
    const outcome = await runOnce({ name: 'leaky', type: 'shell', command });
    expect(outcome).toMatchObject({ status: 'failed', exitCode: 1, message: 'exit code 1: fatal: the upstream refused the token' });
    expect(Buffer.byteLength(outcome.message)).toBeLessThanOrEqual(SHARD_MESSAGE_MAX_BYTES);
    const token = /^token=(s3cr3t-[0-9a-f]{16}-value)$/m.exec(await log(outcome.runId, 'stdout'))?.[1];
    expect(token).toBeDefined();
    expect(await log(outcome.runId, 'stderr')).toContain(`token=${token}`);
    // The run record on the executor keeps the tails.
    const record = await eventually(async () => {
      const res = await api(`/runs/${outcome.runId}`);
      expect(res.status).toBe(200);
      return await res.json() as { stdoutTail?: string; stderrTail?: string; message: string };
    });
    expect(record.stdoutTail).toContain(token);
    expect(record.stderrTail).toContain(token);
    // The failure alarm carries the message, not the output.
    await eventually(() => expect(alarms.find((a) => a.includes('"job":"leaky"'))).toBeDefined());
    const alarm = alarms.find((a) => a.includes('"job":"leaky"'))!;
    expect(JSON.parse(alarm)).toMatchObject({ kind: 'run-failed', message: 'exit code 1: fatal: the upstream refused the token' });
    expect(alarm).not.toContain(token);
    // Every node under this test's root, read back: the token is in none, nor are output tails.
    const nodes = await walk(zk);
    expect(nodes.map((n) => n.path)).toContain(paths.jobShard(NS, 'leaky', 0));
    expect(nodes.length).toBeGreaterThan(10);
    for (const node of nodes) {
      expect(node.data, node.path).not.toContain(token);
      expect(node.data, node.path).not.toMatch(/s3cr3t-[0-9a-f]/);
      expect(node.data, node.path).not.toMatch(/stdoutTail|stderrTail/);
      for (const value of Object.values(secrets)) expect(node.data, node.path).not.toContain(value);
    }
  });

  it('a secret of the executor printed as the last stderr line is redacted from the message', async () => {
    // The job finds the value somewhere the executor cannot hide (a file it can read), not in its config.
    const file = join(mkdtempSync(join(tmpdir(), 'orrery-blurts-')), 'db-password');
    writeFileSync(file, secrets.DB_PASSWORD);
    const outcome = await runOnce({ name: 'blurts', type: 'shell', command: `echo "connecting with $(cat ${file}) failed" >&2; exit 2` });
    expect(outcome).toMatchObject({ status: 'failed', message: 'exit code 2: connecting with [redacted] failed' });
    for (const node of await walk(zk)) expect(node.data, node.path).not.toContain(secrets.DB_PASSWORD);
  });

  it('a 5 KB line of multi-byte characters becomes a message of at most 512 bytes, cut on a character', async () => {
    // é€x: 6 bytes; 1,000 of them on one stderr line.
    const command = 'awk \'BEGIN { for (i = 0; i < 1000; i++) printf "é€x"; print "" }\' >&2; exit 3';
    const outcome = await runOnce({ name: 'wide', type: 'shell', command });
    expect(outcome).toMatchObject({ status: 'failed', exitCode: 3 });
    const bytes = Buffer.byteLength(outcome.message);
    expect(bytes).toBeLessThanOrEqual(SHARD_MESSAGE_MAX_BYTES);
    expect(bytes).toBeGreaterThan(SHARD_MESSAGE_MAX_BYTES - 8);
    expect(outcome.message).not.toContain('\uFFFD');
    expect(outcome.message).toMatch(/^exit code 3: (é€x|€x|x)(é€x)+(é|é€)?…$/u);
    expect(Buffer.byteLength(await log(outcome.runId, 'stderr'))).toBe(6001);
  });
});
