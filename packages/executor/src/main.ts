/**
 * The `orrery-executor` process: the only place that reads process.env and handles signals.
 *
 * SIGTERM or SIGINT: a graceful shutdown (no new fires, shards handed over, runs in progress given
 * `--shutdown-timeout`), then exit code 0; a second signal stops the runs still in progress at once.
 * A signal while the executor is still starting (say, connecting to a ZooKeeper that does not
 * answer) ends the start at once and exits with code 0 as well: a stop that was asked for is a
 * clean end, whatever phase it found the process in.
 */
import { createLogger, createMetrics, toError, parseBinArgs } from '@orrery/core';
import { EXECUTOR_USAGE, parseExecutorConfig } from './config.js';
import { createExecutor } from './executor.js';

export async function main(argv: readonly string[]): Promise<number> {
  const parsed = parseBinArgs('orrery-executor', argv, EXECUTOR_USAGE, () => parseExecutorConfig(argv, process.env));
  if ('exit' in parsed) return parsed.exit;
  const { config } = parsed;
  const logger = createLogger({ name: 'orrery-executor', level: config.logLevel });
  const executor = createExecutor({
    connect: config.zk,
    root: config.root,
    ...(config.zkAuth ? { zkAuth: config.zkAuth } : {}),
    sessionTimeoutMs: config.sessionTimeoutMs,
    namespace: config.namespace,
    name: config.name,
    jobsDir: config.jobsDir,
    tags: config.tags,
    dataDir: config.dataDir,
    httpPort: config.httpPort,
    httpHost: config.httpHost,
    advertiseHost: config.advertiseHost,
    clusterToken: config.clusterToken,
    // Jobs get this process's environment without Orrery's secrets (job-env.ts), computed once.
    jobEnv: process.env,
    secretEnv: config.secretEnv,
    killGraceMs: config.killGraceMs,
    maxLogBytes: config.maxLogBytes,
    nodeWorkers: { max: config.nodeWorkers },
    logger,
    metrics: createMetrics(),
  });
  let stopping: Promise<void> | undefined;
  const exited = new Promise<number>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        if (stopping) {
          // A second signal: stop the runs still in progress at once (SIGKILL), then leave.
          logger.warn({ signal }, 'second signal: stopping every run now');
          void executor.close({ graceMs: 0 });
          return;
        }
        logger.info({ signal, shutdownTimeoutSeconds: config.shutdownTimeoutMs / 1000 }, 'shutting down gracefully');
        stopping = executor.shutdown(config.shutdownTimeoutMs);
        void stopping.then(() => resolve(0));
      });
    }
    // Started by a harness with an IPC channel (tests, npm start): stop when that parent is gone.
    if (process.channel) {
      process.once('disconnect', () => {
        stopping ??= executor.close();
        void stopping.then(() => resolve(0));
      });
    }
  });
  try {
    await executor.start();
    logger.info({ httpPort: executor.httpPort }, 'executor started');
  } catch (error) {
    // Stopped while starting: the signal's shutdown closed the executor, which ended the start.
    if (stopping) return exited;
    const e = toError(error);
    logger.fatal({ err: e }, 'could not start');
    process.stderr.write(`orrery-executor: ${e.message}\n`);
    await executor.close();
    return 1;
  }
  return exited;
}
