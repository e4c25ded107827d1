/**
 * The `orrery-console` process: the only place that reads process.env and handles signals.
 * SIGINT/SIGTERM close it gracefully (a second one exits at once); started with an IPC channel
 * (tests, `npm start`), it stops when that parent goes.
 */
import { createLogger, stopOnSignals, toError, parseBinArgs } from '@orrery/core';
import { CONSOLE_USAGE, parseConsoleConfig } from './config.js';
import { createConsole } from './console.js';

export async function main(argv: readonly string[]): Promise<number> {
  const parsed = parseBinArgs('orrery-console', argv, CONSOLE_USAGE, () => parseConsoleConfig(argv, process.env));
  if ('exit' in parsed) return parsed.exit;
  const { config } = parsed;
  const logger = createLogger({ name: 'orrery-console', level: config.logLevel });
  const server = createConsole({ config, logger });

  const { stop, exited } = stopOnSignals(logger, () => server.close());

  try {
    logger.info({ zk: config.zk, root: config.root }, 'starting');
    await server.start();
  } catch (error) {
    logger.fatal({ err: toError(error) }, 'could not start');
    await stop('startup-failure');
    return 1;
  }
  return exited;
}
