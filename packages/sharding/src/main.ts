/**
 * The `orrery-sharding` process: the only place that reads process.env and handles signals.
 */
import { createLogger, createMetrics, createZkClient, startHttpEndpoint, stopOnSignals, toError, type HttpEndpoint, parseBinArgs } from '@orrery/core';
import { createAllocator } from './allocator.js';
import { parseShardingConfig, SHARDING_USAGE } from './config.js';

export async function main(argv: readonly string[]): Promise<number> {
  const parsed = parseBinArgs('orrery-sharding', argv, SHARDING_USAGE, () => parseShardingConfig(argv, process.env));
  if ('exit' in parsed) return parsed.exit;
  const { config } = parsed;
  const logger = createLogger({ name: 'orrery-sharding', level: config.logLevel });
  const metrics = createMetrics();
  const zk = createZkClient({ connect: config.zk, root: config.root, sessionTimeoutMs: config.sessionTimeoutMs, connectTimeoutMs: 60_000, metrics, ...(config.zkAuth ? { auth: config.zkAuth } : {}) });
  zk.on('state', (s) => logger.info({ state: s.state, sessionId: s.sessionId, newSession: s.newSession }, 'zookeeper connection state'));
  const allocator = createAllocator({ zk, logger, metrics, ...(config.id ? { id: config.id } : {}), debounceMs: config.debounceMs, alarmAfterMs: config.alarmAfterMs });
  let http: HttpEndpoint | undefined;

  const { stop, exited } = stopOnSignals(logger, async () => {
    await allocator.close();
    await http?.close();
    await zk.close();
  });

  try {
    logger.info({ zk: config.zk, root: config.root }, 'starting');
    await zk.start();
    if (config.httpPort !== undefined) {
      http = await startHttpEndpoint({
        port: config.httpPort,
        host: config.httpHost,
        metrics,
        logger,
        health: () => ({ ok: zk.phase === 'connected', zookeeper: zk.phase, leader: allocator.isLeader, id: allocator.id }),
      });
      logger.info({ port: http.port }, 'http endpoint listening');
    }
    await allocator.start();
    logger.info({ id: allocator.id }, 'allocator started');
  } catch (error) {
    logger.fatal({ err: toError(error) }, 'could not start');
    await stop('startup-failure');
    return 1;
  }
  return exited;
}
