import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createZkClient, parseJobConfig, paths, type ZkClient } from '@orrery/core';
import { freePort, uniqueRoot } from '@orrery/core/testing';
import { main } from './main.js';
import { applyPlan, planJobs, validateJobDocument } from '../store/jobs.js';

const zkConnect = inject('zkConnect');
const root = uniqueRoot('cli');
const dir = mkdtempSync(join(tmpdir(), 'orrery-cli-'));
let zk: ZkClient;

beforeAll(async () => {
  zk = createZkClient({ connect: zkConnect, root });
  await zk.start();
});
afterAll(async () => {
  await zk.close();
});

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return cliAt(root, ...args);
}

/** The CLI on the tree at `at` (a test that must not see another's namespaces has its own). */
async function cliAt(at: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(['--zk', zkConnect, '--root', at, ...args], {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env: {},
  });
  return { code, stdout, stderr };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const JOBS_YAML = `
jobs:
  - name: backup
    type: shell
    command: tar czf /tmp/backup-$ORRERY_SHARD_ITEM.tgz /etc
    cron: "0 30 2 * * *"
    timeZone: Europe/Berlin
    shardingTotalCount: 3
    shardingItemParameters: "0=a,1=b,2=c"
    enabled: true
    downstream: [report]
  - name: report
    type: node
    handler: daily-report
    misfire: { policy: skip }
`;

describe('orrery CLI against a real ZooKeeper', () => {
  it('creates, lists and refuses to re-create a namespace', async () => {
    expect(await cli('ns', 'create', 'shop', '--description', 'the shop', '--webhook', 'http://127.0.0.1:9/hook')).toMatchObject({ code: 0 });
    const again = await cli('ns', 'create', 'shop');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("namespace 'shop' already exists");
    const list = await cli('ns', 'list', '-o', 'json');
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ name: 'shop', description: 'the shop', alarm: { webhook: 'http://127.0.0.1:9/hook', silenceSeconds: 300 } })]);
    expect((await cli('ns', 'create', 'bad name')).stderr).toContain('namespace name');
  });

  it('apply → get -o json returns exactly what was applied', async () => {
    const f = file('jobs.yaml', JOBS_YAML);
    const applied = await cli('-n', 'shop', 'apply', '-f', f);
    expect(applied).toMatchObject({ code: 0 });
    expect(applied.stdout).toContain('+ create    backup');
    expect(applied.stdout).toContain('applied: 2 written, 0 unchanged, 0 conflict(s)');
    const got = await cli('-n', 'shop', 'get', 'jobs', '-o', 'json');
    const expected = validateJobDocument((await import('yaml')).parse(JOBS_YAML)).map((e) => e.config);
    expect(JSON.parse(got.stdout)).toEqual(expected);
    expect(JSON.parse((await cli('-n', 'shop', 'get', 'job', 'backup', '-o', 'json')).stdout).shardingItemParameters).toEqual({ 0: 'a', 1: 'b', 2: 'c' });
    const table = await cli('-n', 'shop', 'get', 'jobs');
    expect(table.stdout).toMatch(/backup\s+shell\s+0 30 2 \* \* \*\s+3\s+yes/);
    expect(table.stdout).toMatch(/report\s+node\s+\(passive\)\s+1\s+no/);
  });

  it('shows a field diff, and --dry-run writes nothing', async () => {
    const before = await zk.get(paths.job('shop', 'backup'));
    const f = file('change.yaml', JOBS_YAML.replace('"0 30 2 * * *"', '"0 */5 * * * *"'));
    const dry = await cli('-n', 'shop', 'apply', '-f', f, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('~ change    backup');
    expect(dry.stdout).toContain('cron: "0 30 2 * * *" → "0 */5 * * * *"');
    expect(dry.stdout).toContain('= unchanged report');
    expect(dry.stdout).toContain('dry run: nothing written (1 job(s) would be written)');
    const after = await zk.get(paths.job('shop', 'backup'));
    expect(after.stat.version).toBe(before.stat.version);
    expect(after.data?.toString()).toBe(before.data?.toString());
  });

  it('writes nothing when any job in the file is invalid, and names every field and rule', async () => {
    const f = file('bad.yaml', `
jobs:
  - name: fine
    type: shell
    command: "true"
  - name: broken
    type: shell
    command: "true"
    cron: "61 * * * *"
    shardingTotalCount: 2
    shardingItemParameters: { "5": x }
    colour: blue
`);
    const r = await cli('-n', 'shop', 'apply', '-f', f);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('jobs[1] (broken).colour');
    expect(r.stderr).toContain('[rule: unknown-field]');
    // Every problem at once: the unknown field hides none of the others.
    expect(r.stderr).toContain('jobs[1] (broken).cron');
    expect(r.stderr).toContain('jobs[1] (broken).shardingItemParameters.5');
    const f2 = file('bad2.yaml', `
jobs:
  - name: fine
    type: shell
    command: "true"
  - name: broken
    type: shell
    command: "true"
    cron: "61 * * * *"
    timeZone: Moon/Base
    shardingTotalCount: 2
    shardingItemParameters: { "5": x }
    downstream: [nobody]
`);
    const r2 = await cli('-n', 'shop', 'apply', '-f', f2);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain('jobs[1] (broken).cron');
    expect(r2.stderr).toContain('[rule: cron]');
    expect(r2.stderr).toContain('jobs[1] (broken).timeZone');
    expect(r2.stderr).toContain('jobs[1] (broken).shardingItemParameters.5');
    expect(r2.stderr).toContain('[rule: item-range]');
    expect(await zk.exists(paths.job('shop', 'fine'))).toBeNull();
    expect(await zk.exists(paths.job('shop', 'broken'))).toBeNull();
    const f3 = file('bad3.yaml', 'jobs:\n  - name: x\n    type: shell\n    command: "true"\n    downstream: [nobody]\n');
    const r3 = await cli('-n', 'shop', 'apply', '-f', f3);
    expect(r3.stderr).toContain("jobs[0] (x).downstream[0]: no job named 'nobody'");
    expect(await zk.exists(paths.job('shop', 'x'))).toBeNull();
    const r4 = await cli('-n', 'shop', 'apply', '-f', file('syntax.yaml', 'jobs: [ {'));
    expect(r4.code).toBe(1);
    expect(r4.stderr).toContain('not valid YAML');
  });

  it('reports a compare-and-set conflict by job name and writes nothing for that job', async () => {
    const configs = validateJobDocument({ jobs: [{ name: 'backup', type: 'shell', command: 'echo changed', shardingTotalCount: 3 }, { name: 'fresh', type: 'shell', command: 'true' }] }, ['report']);
    const plan = await planJobs(zk, 'shop', configs);
    // Someone else changes `backup` between plan and write.
    const current = await zk.get(paths.job('shop', 'backup'));
    await zk.set(paths.job('shop', 'backup'), current.data!, current.stat.version);
    const result = await applyPlan(zk, 'shop', plan);
    expect(result.conflicts).toEqual([{ name: 'backup', message: expect.stringContaining("job 'backup' was changed") }]);
    expect(result.written).toEqual(['fresh']);
    expect(JSON.parse((await zk.get(paths.job('shop', 'backup'))).data!.toString()).command).not.toBe('echo changed');
  });

  it('enables, disables and deletes jobs', async () => {
    expect((await cli('-n', 'shop', 'disable', 'backup')).stdout).toContain("job 'backup' disabled");
    expect((await cli('-n', 'shop', 'disable', 'backup')).stdout).toContain('already disabled');
    expect((await cli('-n', 'shop', 'enable', 'report')).code).toBe(0);
    const refused = await cli('-n', 'shop', 'delete', 'report');
    expect(refused).toMatchObject({ code: 1 });
    expect(refused.stderr).toContain('disable it first');
    expect((await cli('-n', 'shop', 'delete', 'backup')).code).toBe(0);
    expect(await zk.exists(paths.job('shop', 'backup'))).toBeNull();
    expect((await cli('-n', 'shop', 'enable', 'backup')).stderr).toContain("job 'backup' does not exist");
    expect(parseJobConfig(JSON.parse((await zk.get(paths.job('shop', 'report'))).data!.toString())).enabled).toBe(true);
  });

  it('lists executors and assignments as ZooKeeper holds them', async () => {
    await zk.mkdirp(paths.executor('shop', 'exec-1'));
    await zk.create(paths.executorPresence('shop', 'exec-1'), JSON.stringify({ host: 'h1', pid: 42, version: '0.1.0', startedAt: 1, tags: ['gpu'], handlers: ['daily-report'] }), 'ephemeral');
    await zk.create(paths.executorMeta('shop', 'exec-1'), JSON.stringify({ noTraffic: true }));
    await zk.create(paths.jobAssignment('shop', 'report'), JSON.stringify({ epoch: 4, allocatorEpoch: 9, items: { 'exec-1': [0] }, unassigned: [] }));
    const ex = await cli('-n', 'shop', 'get', 'executors');
    expect(ex.stdout).toMatch(/exec-1\s+online, drained\s+h1\s+42\s+0\.1\.0\s+gpu\s+daily-report/);
    const asg = JSON.parse((await cli('-n', 'shop', 'get', 'assignment', '-o', 'json')).stdout);
    expect(asg).toContainEqual({ job: 'report', enabled: true, assignment: expect.objectContaining({ epoch: 4, items: { 'exec-1': [0] } }) });
    expect((await cli('-n', 'shop', 'get', 'assignment')).stdout).toMatch(/report\s+4\s+exec-1: 0/);
  });

  it('refuses to delete a namespace with jobs unless forced', async () => {
    const r = await cli('ns', 'delete', 'shop');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--force');
    // Not while an executor of it runs, forced or not: it would register again.
    expect((await cli('ns', 'delete', 'shop', '--force')).stderr).toContain("namespace 'shop' has 1 running executor(s) (exec-1); stop them first");
    await zk.delete(paths.executorPresence('shop', 'exec-1'));
    expect((await cli('ns', 'delete', 'shop', '--force')).code).toBe(0);
    expect(await zk.exists(paths.namespace('shop'))).toBeNull();
    expect((await cli('-n', 'shop', 'get', 'jobs')).stderr).toContain("namespace 'shop' does not exist");
  });

  it.each([
    [['bogus'], 'unknown command'],
    [['get', 'jobs'], '-n NAMESPACE is required'],
    [['-n', 'x', 'apply'], '-f FILE is required'],
    [['--nope'], "Unknown option '--nope'"],
    [['-n', 'x', 'get', 'jobs', '-o', 'xml'], "must be 'json' or 'table'"],
    [['ns', 'create'], 'expected: orrery ns create NAME'],
  ])('exits 2 on usage error %j', async (args, message) => {
    const r = await cli(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });
});

describe('orrery import-saturn against a real ZooKeeper', () => {
  const own = uniqueRoot('cli-saturn');
  const cli = (...args: string[]) => cliAt(own, ...args);
  const EXPORT = JSON.stringify([
    { jobName: 'settle', jobType: 'SHELL_JOB', cron: '0 */5 * * * ?', shardingTotalCount: 2, shardingItemParameters: '0=echo east,1=echo west', enabled: true, showNormalLog: true },
    { jobName: 'legacy', jobType: 'JAVA_JOB', jobClass: 'com.shop.Legacy', cron: '0 0 * * * ?' },
  ]);

  it('prints what it refuses, what it cannot carry over and the diff; --dry-run writes nothing; then imports disabled', async () => {
    expect((await cli('ns', 'create', 'saturn')).code).toBe(0);
    const path = file('saturn.json', EXPORT);
    const dry = await cli('-n', 'saturn', 'import-saturn', path, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('x refused   legacy: a Java job runs a Java class');
    expect(dry.stdout).toContain('  note      settle.showNormalLog: not carried over');
    expect(dry.stdout).toContain('  note      settle.enabled: imported disabled');
    expect(dry.stdout).toContain('+ create    settle (disabled');
    expect(dry.stdout).toContain('dry run: nothing written (1 job(s) would be written)');
    expect((await cli('-n', 'saturn', 'get', 'jobs', '-o', 'json')).stdout.trim()).toBe('[]');

    const real = await cli('-n', 'saturn', 'import-saturn', path);
    expect(real.code).toBe(0);
    expect(real.stdout).toContain('applied: 1 written, 0 unchanged, 0 conflict(s)');
    expect(real.stdout).toContain('imported jobs are disabled');
    const [job] = JSON.parse((await cli('-n', 'saturn', 'get', 'jobs', '-o', 'json')).stdout) as Array<Record<string, unknown>>;
    expect(job).toMatchObject({ name: 'settle', type: 'shell', enabled: false, command: 'eval "$ORRERY_SHARD_PARAM"', shardingItemParameters: { 0: 'echo east', 1: 'echo west' } });
    // Again: nothing changed.
    expect((await cli('-n', 'saturn', 'import-saturn', path)).stdout).toContain('= unchanged settle');
  });

  it('refuses a file that is not JSON, or not a list of jobs, writing nothing', async () => {
    const notJson = await cli('-n', 'saturn', 'import-saturn', file('bad.json', '{jobs:'));
    expect(notJson).toMatchObject({ code: 1, stderr: expect.stringContaining('bad.json: not readable as JSON') });
    const notList = await cli('-n', 'saturn', 'import-saturn', file('obj.json', '{"jobs": 3}'));
    expect(notList).toMatchObject({ code: 1, stderr: expect.stringContaining('a JSON list of Saturn job configs') });
  });
});

describe('the orrery bin as a real process', () => {
  const run = promisify(execFile);
  const bin = join(import.meta.dirname, '../../bin/orrery.js');

  it('exits 0 with output on stdout, 1 on failure, 2 on usage', async () => {
    const ok = await run(process.execPath, [bin, '--zk', zkConnect, '--root', root, 'ns', 'create', 'proc-ns']);
    expect(ok.stdout).toContain("namespace 'proc-ns' created");
    const fail = await run(process.execPath, [bin, '--zk', zkConnect, '--root', root, '-n', 'nope', 'get', 'jobs']).catch((e: { code: number; stderr: string }) => e);
    expect(fail).toMatchObject({ code: 1, stderr: expect.stringContaining("namespace 'nope' does not exist") });
    const usage = await run(process.execPath, [bin]).catch((e: { code: number; stderr: string }) => e);
    expect(usage).toMatchObject({ code: 2, stderr: expect.stringContaining('Usage: orrery') });
    const env = await run(process.execPath, [bin, '--root', root, 'ns', 'list', '-o', 'json'], { env: { ...process.env, ORRERY_ZK: zkConnect } });
    expect(JSON.parse(env.stdout)).toEqual([expect.objectContaining({ name: 'proc-ns' })]);
  });

  it('a usage error is one line and where the help is, not the whole help', async () => {
    const bad = await run(process.execPath, [bin, '--zk', zkConnect, 'ns', 'list', '--bogus']).catch((e: { code: number; stderr: string }) => e);
    expect(bad).toMatchObject({ code: 2 });
    expect((bad as { stderr: string }).stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^error: .*'--bogus'/),
      '(orrery --help lists every command and flag; docs/cli.md explains them)',
    ]);
  });

  it('a ZooKeeper that does not answer is named, with where its address came from and how to name another', async () => {
    const port = await freePort(); // nothing listens there
    const down = await run(process.execPath, [bin, '--zk', `127.0.0.1:${port}`, 'ns', 'list'], { cwd: tmpdir() }).catch((e: { code: number; stderr: string }) => e);
    expect(down).toMatchObject({ code: 1 });
    expect((down as { stderr: string }).stderr).toBe(`error: no ZooKeeper answered at 127.0.0.1:${port} within 8 s (from --zk); start the local platform with npm start, or name one with --zk HOST:PORT or ORRERY_ZK\n`);
  });
});
