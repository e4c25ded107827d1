/**
 * The scale bench's executor host: one Node process running several embedded executors
 * (`createExecutor`), each with its own ZooKeeper session, name and data dir — so that 100 executor
 * instances fit on a small machine. Started by scale-bench.ts with its settings as a JSON argument
 * ({@link HostSettings}); logs JSON lines on stdout (info level, as the bin does: the bench reads
 * `assignment applied` and `job schedule changed` from them); prints `host started` once every
 * instance has registered.
 *
 * IPC: `{ close: [names] }` shuts those instances down gracefully (the allocator moves their shards
 * away) and answers `{ closed: [names] }`; with `sessions: true` it closes their ZooKeeper sessions
 * first (their presences and latches go at once, as when a process dies and its fence guard closes
 * its session), then closes the rest of each instance (no run waited for). Stops when its parent is
 * gone (the IPC channel closes) or on SIGTERM: closes every instance, then exits.
 *
 * The embedded instances run without a fence guard process (one more process per instance); the
 * bench's failover trials use real `orrery-executor` processes, which have theirs.
 */
import { join } from 'node:path';
import { createExecutor, type Executor } from '@orrery/executor';
import { createLogger, toError } from '@orrery/core';

/** What the bench passes (argv[2], JSON). */
export interface HostSettings {
  zk: string;
  root: string;
  namespace: string;
  names: string[];
  /** Each instance's data dir is `<dataDir>/<name>`. */
  dataDir: string;
  jobsDir: string;
  sessionTimeoutMs: number;
  /** Node job workers per instance. */
  nodeWorkers: number;
  /** Instances started at once. */
  startConcurrency: number;
}

const settings = JSON.parse(process.argv[2] ?? '{}') as HostSettings;
const logger = createLogger({ name: 'orrery-executor', level: 'info' });
const executors = new Map<string, Executor>();

async function startOne(name: string): Promise<void> {
  const executor = createExecutor({
    connect: settings.zk,
    root: settings.root,
    namespace: settings.namespace,
    name,
    jobsDir: settings.jobsDir,
    dataDir: join(settings.dataDir, name),
    sessionTimeoutMs: settings.sessionTimeoutMs,
    fenceGuard: false,
    nodeWorkers: { min: 1, max: settings.nodeWorkers },
    logger,
  });
  executors.set(name, executor);
  executor.on('error', (error) => logger.error({ err: error, executor: name }, 'executor error'));
  await executor.start();
}

async function startAll(): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.max(1, settings.startConcurrency) }, async () => {
    while (next < settings.names.length) {
      const name = settings.names[next]!;
      next += 1;
      await startOne(name);
    }
  }));
}

let closing: Promise<void> | undefined;
function closeAll(): Promise<void> {
  closing ??= Promise.all([...executors.values()].map((e) => e.close({ graceMs: 1000 }))).then(() => undefined);
  return closing;
}

process.on('message', (message: { close?: string[]; sessions?: boolean }) => {
  const names = message.close ?? [];
  const close = async (e: Executor): Promise<void> => {
    if (!message.sessions) return e.shutdown(10_000);
    await e.zk.close();
    await e.close({ graceMs: 0 });
  };
  void Promise.all(names.map((n) => { const e = executors.get(n); return e ? close(e) : undefined; })).then(
    () => process.send?.({ closed: names }),
    (error: unknown) => logger.error({ err: toError(error) }, 'could not shut instances down'),
  );
});
process.once('disconnect', () => void closeAll().then(() => process.exit(0)));
process.once('SIGTERM', () => void closeAll().then(() => process.exit(0)));

try {
  await startAll();
  logger.info({ count: executors.size }, 'host started');
} catch (error) {
  logger.fatal({ err: toError(error) }, 'host could not start');
  await closeAll();
  process.exit(1);
}
