/**
 * How Orrery's processes stop: SIGINT or SIGTERM runs `close` once (a second signal exits at once);
 * started by a harness with an IPC channel (tests, `npm start`), the process also stops when that
 * parent goes. Only a process's `main` uses it.
 */
import type { Logger } from './logger.js';

/** The handle of {@link stopOnSignals}. */
export interface ProcessStop {
  /** Runs `close` once (later calls join it), logging why. */
  stop(reason: string): Promise<void>;
  /** Resolves 0 once a signal or the parent's departure stopped the process. */
  readonly exited: Promise<number>;
}

/** Installs the signal handlers; `close` shuts the process's parts down. */
export function stopOnSignals(logger: Logger, close: () => Promise<void>): ProcessStop {
  let stopping: Promise<void> | undefined;
  const stop = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      logger.info({ signal: reason }, 'stopping');
      await close();
    })();
    return stopping;
  };
  const exited = new Promise<number>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        if (stopping) process.exit(1); // a second signal: at once
        void stop(signal).then(() => resolve(0));
      });
    }
    if (process.channel) process.once('disconnect', () => void stop('parent-gone').then(() => resolve(0)));
  });
  return { stop, exited };
}
