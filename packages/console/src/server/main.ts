/**
 * The `orrery-console` process: the only place that reads process.env and handles signals.
 * SIGINT/SIGTERM close it gracefully (a second one exits at once); started with an IPC channel
 * (tests, `npm start`), it stops when that parent goes.
 */
import { createLogger, stopOnSignals, toError } from '@orrery/core';
import { CONSOLE_USAGE, parseConsoleConfig } from './config.js';
import { createConsole } from './console.js';

export async function main(argv: readonly string[]): Promise<number> {
  let config;
  try {
    config = parseConsoleConfig(argv, process.env);
  } catch (error) {
    const message = toError(error).message;
    if (message === 'help') {
      process.stdout.write(CONSOLE_USAGE);
      return 0;
    }
    process.stderr.write(`orrery-console: ${message}\n\n${CONSOLE_USAGE}`);
    return 2;
  }
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
