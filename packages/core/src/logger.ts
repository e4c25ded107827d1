/**
 * pino loggers for Orrery's processes: JSON lines on stdout, fixed message texts, variables in fields.
 * Child loggers scope by namespace, job, shard and run.
 */
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** The process name, in every line (`orrery-sharding`, `orrery-executor`). */
  name: string;
  /** Default `info`. */
  level?: string;
}

/** A logger writing JSON lines to stdout. */
export function createLogger(options: LoggerOptions): Logger {
  return pino({ name: options.name, level: options.level ?? 'info', base: { pid: process.pid } });
}

/** A logger that drops everything (embedding and tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
