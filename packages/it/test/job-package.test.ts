// A job author's project outside this repository: @orrery/core and @orrery/executor packed with
// `npm pack` (their prepack builds lib/), installed from the tarballs into a project under the OS
// temp dir without install scripts (so without the ZooKeeper addon built), a TypeScript job module
// type-checked there under a consumer's usual settings, and run by a real orrery-executor of this
// repository against the test ZooKeeper.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  checkAssignment,
  checkShardingState,
  createZkClient,
  encodeJson,
  parseJobConfig,
  paths,
  readJson,
  readShard,
  type ShardOutcome,
  type ZkClient,
} from '@orrery/core';
import { eventually, freePort, uniqueRoot } from '@orrery/core/testing';
import { createNamespace, runCli } from '@orrery/console';
import { startProcess, stopAllProcesses, type RunningProcess } from '../src/index.js';

const zkConnect = inject('zkConnect');
const REPO = realpathSync(fileURLToPath(new URL('../../../', import.meta.url)));
/** The repository's TypeScript compiler (the job author's project has none of its own here). */
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');
/** The repository's @types/node, standing in for the author's own. */
const TYPE_ROOTS = join(REPO, 'node_modules/@types');
const NS = 'jobs';
const TOKEN = 'job-package-token';
/** The export condition under which this repository's packages resolve to their sources. */
const SOURCE_CONDITION_FLAG = '--conditions=@orrery/source';
/** Everything from the npm cache when it can be: the test should not wait on the registry. */
const NPM_INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund'];
const COMMAND_TIMEOUT_MS = 120_000;

/** This process's environment as a job author's shell would have it: without the repo's source condition. */
const authorEnv = (): NodeJS.ProcessEnv => {
  const options = (process.env.NODE_OPTIONS ?? '').split(/\s+/).filter((o) => o && o !== SOURCE_CONDITION_FLAG);
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: options.join(' ') };
  for (const name of Object.keys(env)) if (name.startsWith('npm_')) delete env[name];
  return env;
};

/** Runs a command to its end; rejects with its output when it fails. */
function run(command: string, args: readonly string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env: authorEnv(), timeout: COMMAND_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

let dir: string;
let project: string;
let jobsDir: string;
let installMs = 0;
let zk: ZkClient;
let root: string;
let executor: RunningProcess & { port: number };

/** The job module, written by the author against the published types. */
const HELLO_JOB = `import { defineJob, type JobContext, type JobResult } from '@orrery/executor';

export default defineJob({
  name: 'outside-hello',
  description: 'Written outside the Orrery repository.',
  run(ctx: JobContext): JobResult {
    const item: number = ctx.shardItem;
    const signal: AbortSignal = ctx.signal;
    ctx.log(\`outside-hello item=\${item} of=\${ctx.shardTotal} trigger=\${ctx.trigger} aborted=\${signal.aborted}\`);
    ctx.log(\`resolved=\${import.meta.resolve('@orrery/executor')}\`);
    return { message: \`hello from \${ctx.job}\` };
  },
});
`;
/** The same through the light entry, which loads nothing but defineJob. */
const LIGHT_JOB = `import { defineJob } from '@orrery/executor/job';

export default defineJob({
  name: 'outside-light',
  async run(ctx) {
    const param: string = ctx.jobParam;
    ctx.log(\`outside-light param=\${param}\`);
  },
});
`;
/** A deliberate type error: the author's tsc must see the published types, not \`any\`. */
const WRONG_JOB = `import { defineJob } from '@orrery/executor';

export default defineJob({
  name: 'outside-wrong',
  run(ctx) {
    const item: string = ctx.shardItem;
    return { message: item };
  },
});
`;

beforeAll(async () => {
  dir = mkdtempSync(join(realpathSync(tmpdir()), 'orrery-job-package-'));
  expect(dir.startsWith(REPO)).toBe(false);
  const tarballs = join(dir, 'tarballs');
  mkdirSync(tarballs);
  // The executor's prepack builds lib/ for both packages (core first); core's then has nothing to add.
  await run('npm', ['pack', '--pack-destination', tarballs, '-w', '@orrery/executor'], REPO);
  await run('npm', ['pack', '--pack-destination', tarballs, '-w', '@orrery/core', '--ignore-scripts'], REPO);
  const packed = readdirSync(tarballs).sort();
  expect(packed).toEqual(['orrery-core-0.1.0.tgz', 'orrery-executor-0.1.0.tgz']);

  project = join(dir, 'project');
  jobsDir = join(project, 'jobs');
  mkdirSync(jobsDir, { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'job-author', private: true, type: 'module' }, null, 2));
  // Without install scripts: a job author needs no native build (the ZooKeeper addon is only
  // loaded by an executor that connects).
  const started = Date.now();
  await run('npm', ['install', ...NPM_INSTALL_FLAGS, '--ignore-scripts', ...packed.map((t) => join(tarballs, t))], project);
  installMs = Date.now() - started;
  writeFileSync(join(jobsDir, 'hello.ts'), HELLO_JOB);
  writeFileSync(join(jobsDir, 'light.ts'), LIGHT_JOB);

  root = uniqueRoot('job-package');
  zk = createZkClient({ connect: zkConnect, root });
  await zk.start();
  await createNamespace(zk, NS, {});
}, 240_000);

afterAll(async () => {
  await stopAllProcesses();
  await zk?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a job module outside the repository', () => {
  it('installs from the tarballs without the ZooKeeper addon built', async () => {
    console.info(`job-package: npm install of the tarballs took ${installMs} ms`);
    await expect(run(process.execPath, ['-e', "require('zookeeper')"], project)).rejects.toThrow(/No native build was found/);
  });

  it('type-checks under strict settings with node16 and bundler resolution, and the published types catch a mistake', async () => {
    // The published declarations themselves are checked once (skipLibCheck: false, the slow part).
    const tsconfig = (module: string, moduleResolution: string, include: string[], skipLibCheck = true): string => JSON.stringify({
      compilerOptions: { strict: true, module, moduleResolution, target: 'es2022', noEmit: true, skipLibCheck, types: ['node'], typeRoots: [TYPE_ROOTS] },
      include,
    });
    writeFileSync(join(project, 'tsconfig.node16.json'), tsconfig('node16', 'node16', ['jobs/*.ts'], false));
    writeFileSync(join(project, 'tsconfig.bundler.json'), tsconfig('esnext', 'bundler', ['jobs/*.ts']));
    const wrongDir = join(project, 'wrong');
    mkdirSync(wrongDir);
    writeFileSync(join(wrongDir, 'wrong.ts'), WRONG_JOB);
    writeFileSync(join(project, 'tsconfig.wrong.json'), tsconfig('node16', 'node16', ['wrong/*.ts']));
    await Promise.all([
      run(process.execPath, [TSC, '-p', 'tsconfig.node16.json'], project),
      run(process.execPath, [TSC, '-p', 'tsconfig.bundler.json'], project),
      expect(run(process.execPath, [TSC, '-p', 'tsconfig.wrong.json'], project)).rejects.toThrow(/TS2322: Type 'number' is not assignable to type 'string'/),
    ]);
  });

  it('loads from the installed lib/ with plain Node, without the executor (light entry) or the ZooKeeper addon (main entry)', async () => {
    const script = `
      import { createRequire } from 'node:module';
      const main = await import('@orrery/executor');
      const light = await import('@orrery/executor/job');
      const loaded = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({
        main: import.meta.resolve('@orrery/executor'),
        light: import.meta.resolve('@orrery/executor/job'),
        defineJob: typeof main.defineJob, createExecutor: typeof main.createExecutor, lightDefineJob: typeof light.defineJob,
        lightKeys: Object.keys(light).sort(),
        zookeeperLoaded: loaded.some((p) => p.includes('/zookeeper/')),
      }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], project);
    const seen = JSON.parse(stdout.trim()) as Record<string, unknown>;
    const installed = `file://${project}/node_modules/@orrery/executor/`;
    expect(seen).toEqual({
      main: `${installed}lib/index.js`,
      light: `${installed}lib/job.js`,
      defineJob: 'function',
      createExecutor: 'function',
      lightDefineJob: 'function',
      lightKeys: ['defineJob', 'isJobDefinition'],
      zookeeperLoaded: false,
    });
  });

  it("runs on a real executor of this repository, the module's import resolved to the installed package", async () => {
    const port = await freePort();
    const p = startProcess('orrery-executor', [
      '--zk', zkConnect, '--root', root, '--namespace', NS, '--name', 'e1', '--jobs', jobsDir,
      '--data-dir', join(dir, 'e1'), '--http-port', String(port), '--http-host', '127.0.0.1', '--advertise-host', '127.0.0.1',
      '--session-timeout', '3', '--kill-grace', '1',
    ], { ORRERY_CLUSTER_TOKEN: TOKEN });
    await p.waitForLine(/"executor started"/, 30_000);
    executor = Object.assign(p, { port });
    const allocator = startProcess('orrery-sharding', [
      '--zk', zkConnect, '--root', root, '--http-port', String(await freePort()), '--http-host', '127.0.0.1', '--session-timeout', '3', '--debounce-ms', '100',
    ]);
    await allocator.waitForLine(/"allocator started"/);
    await eventually(async () => expect((await readJson(zk, paths.namespaceSharding(NS), checkShardingState))?.value.members).toEqual(['e1']), { timeoutMs: 20_000 });

    const hello = await runOnce('outside-hello', 'outside-hello');
    expect(hello).toMatchObject({ status: 'succeeded', message: 'hello from outside-hello' });
    const out = await runLog(hello.runId);
    expect(out).toContain('outside-hello item=0 of=1 trigger=run-now aborted=false\n');
    // In a worker `@orrery/executor` is its job entry (the workers' export condition). In a checkout
    // the workers also carry the source condition, under which the installed package offers its own
    // shipped sources; either way the import is the installed package's.
    const installed = `file://${project}/node_modules/@orrery/executor/`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(out).toMatch(new RegExp(` resolved=${installed}(lib/job\\.js|src/job\\.ts)$`, 'm'));

    const light = await runOnce('outside-light', 'outside-light', 'from-the-test');
    expect(light).toMatchObject({ status: 'succeeded' });
    expect(await runLog(light.runId)).toContain('outside-light param=from-the-test\n');
  });
});

/** Applies an enabled passive Node job, runs it once (the CLI), and resolves its outcome once recorded. */
async function runOnce(name: string, handler: string, jobParameter = ''): Promise<ShardOutcome> {
  const config = parseJobConfig({ enabled: true, name, type: 'node', handler, jobParameter });
  await zk.create(paths.job(NS, config.name), encodeJson(config));
  await eventually(async () => {
    const assignment = await readJson(zk, paths.jobAssignment(NS, config.name), checkAssignment);
    const applied = await readJson<{ epoch: number }>(zk, paths.jobApplied(NS, config.name));
    expect(assignment?.value.items).toEqual({ e1: [0] });
    expect(applied?.value.epoch).toBe(assignment!.value.epoch);
  }, { timeoutMs: 20_000 });
  let stderr = '';
  const code = await runCli(['--zk', zkConnect, '--root', root, '-n', NS, 'run', config.name], {
    stdout: { write: () => undefined }, stderr: { write: (t: string) => (stderr += t) }, env: {},
  });
  expect(code, stderr).toBe(0);
  let last: ShardOutcome | undefined;
  await eventually(async () => {
    const shard = await readShard(zk, paths.jobShard(NS, config.name, 0));
    expect(shard?.state.state).toBe('idle');
    last = shard?.state.last;
    expect(last).toBeDefined();
  }, { timeoutMs: 30_000 });
  return last!;
}

/** A run's stdout log from the executor's HTTP API. */
async function runLog(runId: string): Promise<string> {
  return eventually(async () => {
    const res = await fetch(`http://127.0.0.1:${executor.port}/runs/${runId}/log?stream=stdout`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    return res.text();
  });
}
