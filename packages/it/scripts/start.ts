// The body of `npm start` (see start.sh): the whole platform on this machine, in one command.
//
// - ZooKeeper (Debian's package) whose files live in `.orrery/zookeeper/` of the checkout and are
//   reused by the next start, so namespaces and jobs outlive a restart. Its port: the last start's,
//   else 2181, else any free one. `ORRERY_ZK` points everything at an existing ensemble instead.
// - `.orrery/local.json` records that address (and the console's URL): the `orrery` CLI and the
//   bins use it when neither `--zk` nor `ORRERY_ZK` says otherwise (core's zk-connect.ts).
// - One `orrery-sharding`; one `orrery-console` on http://127.0.0.1:8080 (ORRERY_CONSOLE_PORT, or
//   any free port when that one is taken); one `orrery-executor` per namespace, started within
//   seconds of a namespace appearing (and stopped when it goes), each offering the demo Node jobs
//   and running shell jobs.
// - The `demo` namespace with its jobs (packages/it/demo/jobs.yaml), applied when the namespace is
//   first created — later starts leave the jobs as the user left them.
// - The admin's password and the executors' cluster token are made once and kept in `.orrery/`
//   (mode 0600); ORRERY_CLUSTER_TOKEN overrides the token, ORRERY_LOG_LEVEL the bins' log level.
//
// One Ctrl-C is one graceful shutdown: the terminal sends SIGINT to its whole foreground process
// group, so every process this script starts runs in a process group of its own (ownProcessGroup;
// ZooKeeper's server does too) and hears only this script, which stops them one by one — the
// executors first, with a SIGTERM they take as "shut down gracefully", then the console and the
// allocator, then ZooKeeper (its data kept). Further Ctrl-Cs while stopping are ignored (npm may
// forward the first one again).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createZkClient, readLocalPlatform, resolveZkAuth, type LocalPlatform, type ZkClient } from '@orrery/core';
import { eventually, freePort, startZooKeeper, type ZooKeeperServer } from '@orrery/core/testing';
import { listNamespaces, runCli } from '@orrery/console';
import { startProcess, type RunningProcess } from '../src/processes.js';

const checkout = process.cwd();
// ORRERY_HOME: another folder for all of it (a second local platform, a test); the CLI then finds
// its ZooKeeper only through ORRERY_ZK or --zk.
const home = process.env.ORRERY_HOME ? resolve(process.env.ORRERY_HOME) : join(checkout, '.orrery');
const localFile = join(home, 'local.json');
const demoJobs = fileURLToPath(new URL('../demo/jobs.yaml', import.meta.url));
const demoModules = fileURLToPath(new URL('../demo/jobs/', import.meta.url));
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env };
const logLevel = process.env.ORRERY_LOG_LEVEL ?? 'warn';
/** How often the namespaces are listed, to start (or stop) their executors. */
const NAMESPACE_POLL_MS = 3000;

let server: ZooKeeperServer | undefined;
let sharding: RunningProcess | undefined;
let consoleProcess: RunningProcess | undefined;
const executors = new Map<string, RunningProcess>();
let pollTimer: NodeJS.Timeout | undefined;
let watcher: ZkClient | undefined;

// Ctrl-C at any point stops what was started so far, in order (see the header).
let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  if (pollTimer) clearTimeout(pollTimer);
  await watcher?.close().catch(() => undefined);
  console.log('\nStopping: the executors (runs in progress finish), the console, the allocator, ZooKeeper (its data is kept in .orrery/) …');
  await Promise.all([...executors.values()].map((e) => e.stop(10_000)));
  await consoleProcess?.stop();
  await sharding?.stop();
  await server?.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());

/** A secret kept in `.orrery/NAME` (0600): the one there, else a new one written there. */
function keptSecret(name: string, make: () => string): string {
  const path = join(home, name);
  if (existsSync(path)) {
    const kept = readFileSync(path, 'utf8').trim();
    if (kept) return kept;
  }
  const value = make();
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  return value;
}

/** True when nothing listens on 127.0.0.1:`port` (we could bind it). */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const probe = createServer();
    probe.once('error', () => resolvePort(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolvePort(true)));
  });
}

/** The first free port of `candidates`, else any free one. */
async function pickPort(candidates: Array<number | undefined>): Promise<number> {
  for (const port of candidates) if (port !== undefined && port > 0 && (await isFree(port))) return port;
  return freePort();
}

function writeLocal(platform: LocalPlatform): void {
  writeFileSync(localFile, `${JSON.stringify(platform, null, 2)}\n`);
}

mkdirSync(home, { recursive: true, mode: 0o700 });
const previous = readLocalPlatform(localFile);
const portOf = (address: string | undefined): number | undefined => (address ? Number(/:(\d+)$/.exec(address)?.[1]) || undefined : undefined);

let zk = process.env.ORRERY_ZK;
if (!zk) {
  const port = await pickPort([portOf(previous?.zk), 2181]);
  server = await startZooKeeper({ tickTimeMs: 500, dir: join(home, 'zookeeper'), clientPort: port });
  zk = server.connectString;
  writeLocal({ zk });
  console.log(`ZooKeeper   ${zk} (pid ${server.pid}; its data in .orrery/zookeeper, kept across restarts)`);
} else {
  console.log(`ZooKeeper   ${zk} (from ORRERY_ZK)`);
}

const cli = (...args: string[]): Promise<number> => runCli(['--zk', zk!, ...args], io);
/** The CLI's JSON answer to `args`. */
async function cliJson<T>(...args: string[]): Promise<T | undefined> {
  let out = '';
  const code = await runCli(['--zk', zk!, ...args, '-o', 'json'], { ...io, stdout: { write: (t: string) => (out += t) } });
  return code === 0 ? (JSON.parse(out) as T) : undefined;
}

const token = process.env.ORRERY_CLUSTER_TOKEN || keptSecret('cluster-token', () => randomBytes(24).toString('base64url'));
const adminPassword = keptSecret('admin-password', () => randomBytes(12).toString('base64url'));

const shardingPort = await freePort();
sharding = startProcess('orrery-sharding', ['--zk', zk, '--http-port', String(shardingPort), '--http-host', '127.0.0.1', '--log-level', logLevel], {}, { echo: true, ownProcessGroup: true });
console.log(`Allocator   orrery-sharding (pid ${sharding.pid}), http://127.0.0.1:${shardingPort}/metrics`);

/** Starts the executor of namespace `ns` (its run history in .orrery/executors/NS). */
async function startExecutor(ns: string): Promise<void> {
  const port = await freePort();
  const dataDir = join(home, 'executors', ns);
  mkdirSync(dataDir, { recursive: true });
  const p = startProcess('orrery-executor', [
    '--zk', zk!, '--namespace', ns, '--name', `local-${ns}`, '--jobs', demoModules, '--data-dir', dataDir,
    '--http-port', String(port), '--http-host', '127.0.0.1', '--advertise-host', '127.0.0.1', '--log-level', logLevel,
  ], { ORRERY_CLUSTER_TOKEN: token }, { echo: true, ownProcessGroup: true });
  executors.set(ns, p);
  void p.exited.then((code) => {
    if (stopping || executors.get(ns) !== p) return;
    executors.delete(ns);
    console.log(`[npm start] the executor of namespace '${ns}' exited (code ${code}); it is started again at the next check`);
  });
  console.log(`Executor    local-${ns} for namespace '${ns}' (pid ${p.pid}), http://127.0.0.1:${port}/healthz`);
}

// One session for watching the namespaces (not a new one per look).
const watcherAuth = resolveZkAuth(undefined, process.env);
watcher = createZkClient({ connect: zk, root: process.env.ORRERY_ROOT ?? '/orrery', ...(watcherAuth ? { auth: watcherAuth } : {}) });
await watcher.start();

/** One executor per namespace: started for a new one, stopped for one that went. */
async function syncExecutors(): Promise<void> {
  const namespaces = await listNamespaces(watcher!);
  if (stopping) return;
  // A namespace whose node cannot be read (broken) gets no executor: it would not start there.
  const names = new Set(namespaces.filter((n) => n.info !== undefined).map((n) => n.name));
  for (const name of names) if (!executors.has(name)) await startExecutor(name);
  for (const [name, p] of executors) {
    if (names.has(name)) continue;
    executors.delete(name);
    console.log(`[npm start] namespace '${name}' is gone: stopping its executor`);
    void p.stop(10_000);
  }
}

// The demo namespace: its jobs only when it is new (a later start keeps what the user made of them).
const namespaces = await cliJson<Array<{ name: string }>>('ns', 'list');
if (!namespaces) process.exit(1);
const demoIsNew = !namespaces.some((n) => n.name === 'demo');
if (demoIsNew && (await cli('ns', 'create', 'demo', '--description', 'the demo jobs of npm start')) !== 0) process.exit(1);
await syncExecutors();

// The console, on 8080 unless that is taken (or ORRERY_CONSOLE_PORT says otherwise).
const consolePort = await pickPort([process.env.ORRERY_CONSOLE_PORT !== undefined ? Number(process.env.ORRERY_CONSOLE_PORT) : 8080]);
consoleProcess = startProcess('orrery-console', ['--zk', zk, '--port', String(consolePort), '--host', '127.0.0.1', '--log-level', logLevel], {
  ORRERY_ADMIN_PASSWORD: adminPassword, ORRERY_CLUSTER_TOKEN: token,
}, { echo: true, ownProcessGroup: true });
const consoleUrl = `http://127.0.0.1:${consolePort}`;
const consoleUp = await eventually(async () => {
  if (!(await fetch(`${consoleUrl}/healthz`)).ok) throw new Error('not ready');
}, { timeoutMs: 60_000, intervalMs: 200 }).then(() => true, (error: unknown) => {
  console.error(`${String(error)}\nThe console did not start; its output is above.`);
  return false;
});
if (!consoleUp) await stop();
console.log(`Console     orrery-console (pid ${consoleProcess.pid}), ${consoleUrl}`);
if (!process.env.ORRERY_ZK) writeLocal({ zk, console: consoleUrl });

// Every few seconds: an executor for each new namespace, and one started again for each that
// exited. Before the wait below: a demo executor that died at its start (its HTTP port taken in the
// moment between our check and its listen) is started again, instead of the wait running out.
const poll = (): void => {
  pollTimer = setTimeout(() => void syncExecutors().catch((error: unknown) => console.log(`[npm start] could not list the namespaces: ${String(error)}`)).finally(() => { if (!stopping) poll(); }), NAMESPACE_POLL_MS);
};
poll();

// The demo jobs once the demo executor offers their handlers (apply checks that an online
// executor offers each Node job's handler).
if (demoIsNew) {
  await eventually(async () => {
    const list = await cliJson<Array<{ online: boolean; info?: { handlers: string[] } }>>('-n', 'demo', 'get', 'executors');
    if (!list?.some((e) => e.online && (e.info?.handlers.length ?? 0) > 0)) throw new Error('the demo executor has not registered yet');
  }, { timeoutMs: 60_000, intervalMs: 200 });
  if ((await cli('-n', 'demo', 'apply', '-f', demoJobs)) !== 0) await stop();
}

const zkFlag = process.env.ORRERY_ZK ? `--zk ${zk} ` : '';
console.log(`
Orrery is running locally.

  Console   ${consoleUrl}
            user admin, password ${adminPassword}
            (kept in .orrery/admin-password; once you change it in the console, or if this ZooKeeper
            had an admin before, the password is that one)

  Jobs of the demo namespace fire every few seconds: open the console, pick 'demo', then Jobs.
  A namespace you create (in the console or with the CLI) gets a local executor within seconds.

  The CLI finds this ZooKeeper by itself (from .orrery/local.json) when run in this checkout:
    npx orrery ${zkFlag}ns list
    npx orrery ${zkFlag}-n demo get jobs
    npx orrery ${zkFlag}-n demo get shards hello
    npx orrery ${zkFlag}-n demo run hello --items 0 --param now
    ${process.env.ORRERY_CLUSTER_TOKEN ? 'ORRERY_CLUSTER_TOKEN=<yours>' : `ORRERY_CLUSTER_TOKEN=$(cat ${home === join(checkout, '.orrery') ? '.orrery' : home}/cluster-token)`} npx orrery ${zkFlag}-n demo get runs hello   # runs live on the executors
    npx orrery ${zkFlag}ns create shop      # then: npx orrery -n shop apply -f jobs.yaml

  Honoured: ORRERY_ZK (use that ZooKeeper, start none), ORRERY_CONSOLE_PORT (default 8080),
  ORRERY_CLUSTER_TOKEN (the executors' run-history token), ORRERY_LOG_LEVEL (default warn).
  Data: ${home} (delete it for a fresh start). Press Ctrl-C to stop.`);

// Keep running until a signal arrives.
setInterval(() => undefined, 1 << 30);
