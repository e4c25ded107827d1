// The body of `npm start` (see start.sh): starts ZooKeeper (unless ORRERY_ZK points at one), the
// allocator and an executor, applies the demo namespace, and stops everything it started on Ctrl-C.
// ORRERY_ROOT (default /orrery) is the root in ZooKeeper, for this script and what it starts.
//
// One Ctrl-C is one graceful shutdown: the terminal sends SIGINT to its whole foreground process
// group, so every process this script starts runs in a process group of its own (ownProcessGroup;
// ZooKeeper's server does too) and hears only this script, which stops them one by one — the
// executor first, with a SIGTERM it takes as "shut down gracefully", then the allocator, then
// ZooKeeper. (In the terminal's group the executor got the terminal's SIGINT and then this
// script's SIGTERM: a second signal, "stop every run now".) Further Ctrl-Cs while stopping are
// ignored (npm may forward the first one again).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, freePort, startZooKeeper, type ZooKeeperServer } from '@orrery/core/testing';
import { runCli } from '@orrery/console';
import { startProcess, type RunningProcess } from '../src/processes.js';

const demoJobs = fileURLToPath(new URL('../demo/jobs.yaml', import.meta.url));
const demoModules = fileURLToPath(new URL('../demo/jobs/', import.meta.url));
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env };

let server: ZooKeeperServer | undefined;
let sharding: RunningProcess | undefined;
let executor: RunningProcess | undefined;

// Ctrl-C at any point stops what was started so far, in order (see the header).
let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await executor?.stop(10_000);
  await sharding?.stop();
  await server?.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());

let zk = process.env.ORRERY_ZK;
if (!zk) {
  server = await startZooKeeper({ tickTimeMs: 500 });
  zk = server.connectString;
  console.log(`ZooKeeper   ${zk} (pid ${server.pid}, data ${server.dataDir})`);
} else {
  console.log(`ZooKeeper   ${zk} (from ORRERY_ZK)`);
}

const cli = (...args: string[]) => runCli(['--zk', zk!, ...args], io);
let listed = '';
const list = await runCli(['--zk', zk, 'ns', 'list', '-o', 'json'], { ...io, stdout: { write: (t: string) => (listed += t) } });
if (list !== 0) process.exit(list);
const hasDemo = (JSON.parse(listed) as Array<{ name: string }>).some((n) => n.name === 'demo');
if (!hasDemo && (await cli('ns', 'create', 'demo', '--description', 'demo jobs of npm start')) !== 0) process.exit(1);

/** True once the demo executor's presence lists handlers (it registered with its --jobs modules). */
async function isRegistered(): Promise<boolean> {
  let out = '';
  const code = await runCli(['--zk', zk!, '-n', 'demo', 'get', 'executors', '-o', 'json'], { ...io, stdout: { write: (t: string) => (out += t) } });
  return code === 0 && (JSON.parse(out) as Array<{ online: boolean; info?: { handlers: string[] } }>).some((e) => e.online && (e.info?.handlers.length ?? 0) > 0);
}

const shardingPort = await freePort();
sharding = startProcess('orrery-sharding', ['--zk', zk, '--http-port', String(shardingPort), '--http-host', '127.0.0.1', '--log-level', process.env.ORRERY_LOG_LEVEL ?? 'warn'], {}, { echo: true, ownProcessGroup: true });
console.log(`Allocator   orrery-sharding (pid ${sharding.pid}), http://127.0.0.1:${shardingPort}/metrics`);
const executorPort = await freePort();
const token = process.env.ORRERY_CLUSTER_TOKEN ?? 'demo-token';
const dataDir = mkdtempSync(join(tmpdir(), 'orrery-demo-executor-'));
executor = startProcess('orrery-executor', ['--zk', zk, '--namespace', 'demo', '--name', 'demo-executor', '--jobs', demoModules, '--data-dir', dataDir, '--http-port', String(executorPort), '--http-host', '127.0.0.1', '--advertise-host', '127.0.0.1', '--log-level', process.env.ORRERY_LOG_LEVEL ?? 'warn'], { ORRERY_CLUSTER_TOKEN: token }, { echo: true, ownProcessGroup: true });
await eventually(async () => {
  if (!(await fetch(`http://127.0.0.1:${executorPort}/healthz`)).ok) throw new Error('not ready');
}, { timeoutMs: 60_000, intervalMs: 200 });
console.log(`Executor    orrery-executor demo-executor (pid ${executor.pid}), http://127.0.0.1:${executorPort}/healthz`);
// The demo jobs once the executor is up (apply checks that an online executor offers each Node job's handler).
await eventually(async () => {
  if (!(await isRegistered())) throw new Error('not registered');
}, { timeoutMs: 30_000, intervalMs: 200 });
if ((await cli('-n', 'demo', 'apply', '-f', demoJobs)) !== 0) process.exit(1);

console.log(`
Orrery is running locally. Try:
  npx orrery --zk ${zk} ns list
  npx orrery --zk ${zk} -n demo get jobs
  npx orrery --zk ${zk} -n demo get job hello -o json
  npx orrery --zk ${zk} -n demo get assignment
  npx orrery --zk ${zk} -n demo run hello --items 0 --param now
  curl -H "Authorization: Bearer ${token}" "http://127.0.0.1:${executorPort}/runs?job=hello&limit=3"

Not yet part of npm start: the console — it is built by a later issue. Press Ctrl-C to stop.`);

// Keep running until a signal arrives.
setInterval(() => undefined, 1 << 30);
