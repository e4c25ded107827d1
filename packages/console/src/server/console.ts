/**
 * The console process's parts put together: the ZooKeeper client (with digest auth when
 * configured), the session secret and the first admin (each created once, whatever number of
 * consoles start together), the watch-fed cache, and the app listening.
 *
 * `createConsole(options)` returns a handle: `start()` once, `close()` any number of times (it
 * stops listening, then the cache, then the ZooKeeper session).
 */
import type { AddressInfo } from 'node:net';
import { getHeapStatistics } from 'node:v8';
import { createMetrics, createZkClient, toError, type HttpApp, type Logger, type Metrics, type ZkClient } from '@orrery/core';
import { createConsoleApp, type ConsoleRoutes } from './app.js';
import { createAuditor } from './auditor.js';
import { createAuthenticator } from './auth.js';
import type { ConsoleConfig } from './config.js';
import { createConsoleCache, type ConsoleCache } from './console-cache.js';
import type { ConsoleContext } from './context.js';
import { ALL_ROUTES } from './routes/index.js';
import { ensureSessionSecret } from '../store/tokens.js';
import { ensureFirstAdmin } from '../store/users.js';

/** How long `start()` waits for a first ZooKeeper session, in ms. */
export const CONSOLE_CONNECT_TIMEOUT_MS = 60_000;
/**
 * The sessions that watch what others write, besides the console's own: 10,000 jobs' 80,000 such
 * watches make 10,000 each (about a quarter of a second of the C client's work on a connection
 * event, against some 20 s for 90,000 on one session).
 */
export const CONSOLE_WATCH_SESSIONS = 8;

/** Options of {@link createConsole}. */
export interface ConsoleOptions {
  config: ConsoleConfig;
  logger: Logger;
  /** Default: a registry of its own. */
  metrics?: Metrics;
  /** The API's resources. Default: every one (routes/index.ts). */
  routes?: readonly ConsoleRoutes[];
  /**
   * Where the generated first admin password goes, once (never the log). Default: a line on stdout.
   */
  printSecret?: (line: string) => void;
  /** The clock (epoch ms). Default `Date.now`. */
  now?: () => number;
}

/** A running (or stopped) console. */
export interface ConsoleHandle {
  /** The URL it serves, once started. */
  readonly url: string | undefined;
  readonly port: number | undefined;
  /** Connects, creates the secret and first admin if missing, loads the cache, listens. */
  start(): Promise<void>;
  /** Stops serving and closes the ZooKeeper session. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Creates a console; call `start()`. */
export function createConsole(options: ConsoleOptions): ConsoleHandle {
  const { config, logger } = options;
  const now = options.now ?? Date.now;
  const metrics = options.metrics ?? createMetrics();
  const printSecret = options.printSecret ?? ((line: string) => void process.stdout.write(`${line}\n`));
  let zk: ZkClient | undefined;
  let watchClients: ZkClient[] = [];
  let cache: ConsoleCache | undefined;
  let app: HttpApp | undefined;
  let url: string | undefined;
  let port: number | undefined;
  let closing: Promise<void> | undefined;

  const handle: ConsoleHandle = {
    get url() {
      return url;
    },
    get port() {
      return port;
    },
    async start() {
      if (zk) throw new Error('the console was started already');
      zk = createZkClient({ connect: config.zk, root: config.root, connectTimeoutMs: CONSOLE_CONNECT_TIMEOUT_MS, metrics, ...(config.zkAuth ? { auth: config.zkAuth } : {}) });
      zk.on('state', (s) => logger.info({ state: s.state, sessionId: s.sessionId, newSession: s.newSession }, 'zookeeper connection state'));
      await zk.start();
      await ensureSessionSecret(zk, now());
      const firstAdmin = await ensureFirstAdmin(zk, { ...(config.adminPassword !== undefined ? { password: config.adminPassword } : {}), now: now() });
      if (firstAdmin.created) {
        logger.info({ user: firstAdmin.user, passwordFrom: firstAdmin.generatedPassword === undefined ? 'ORRERY_ADMIN_PASSWORD' : 'generated (printed once on stdout)' }, 'first admin created');
        if (firstAdmin.generatedPassword !== undefined) {
          printSecret(`orrery-console: created the first admin '${firstAdmin.user}' with the password ${firstAdmin.generatedPassword} (shown this once; change it after signing in)`);
        }
      }
      // What others write is watched through sessions of their own (see console-cache.ts): at
      // 10,000 jobs one session would hold 90,000 watches, and the C client's work on each
      // connection event grows with their square (seconds of blocked event loop).
      watchClients = Array.from({ length: CONSOLE_WATCH_SESSIONS }, (_, i) => {
        const client = createZkClient({ connect: config.zk, root: config.root, connectTimeoutMs: CONSOLE_CONNECT_TIMEOUT_MS, metrics, ...(config.zkAuth ? { auth: config.zkAuth } : {}) });
        client.on('state', (s) => logger.info({ state: s.state, sessionId: s.sessionId, newSession: s.newSession, watchSession: i + 1 }, 'zookeeper connection state'));
        return client;
      });
      await Promise.all(watchClients.map((c) => c.start()));
      cache = createConsoleCache(zk, { watchClients });
      cache.on('error', (error) => logger.warn({ err: toError(error) }, 'console cache error'));
      await cache.start();
      warnIfHeapIsTight(logger);
      const ctx: ConsoleContext = {
        zk,
        cache,
        logger,
        metrics,
        auth: createAuthenticator({ cache, now }),
        audit: createAuditor({ zk, cache, logger, now }),
        clusterToken: config.clusterToken,
        sessionTtlMs: config.sessionTtlMs,
        now,
      };
      app = createConsoleApp(ctx, { routes: options.routes ?? ALL_ROUTES, trustProxy: config.trustProxy });
      await app.listen({ port: config.port, host: config.host });
      port = (app.server.address() as AddressInfo).port;
      url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
      logger.info({ url, zk: config.zk, root: config.root, trustProxy: config.trustProxy }, 'console started');
    },
    close() {
      closing ??= (async () => {
        // Each step runs even if one before failed: nothing is left open.
        const steps: Array<() => Promise<void> | undefined> = [() => app?.close(), () => cache?.close(), ...watchClients.map((c) => () => c.close()), () => zk?.close()];
        for (const step of steps) {
          try {
            await step();
          } catch (error) {
            logger.warn({ err: toError(error) }, 'console close step failed');
          }
        }
      })();
      return closing;
    },
    [Symbol.asyncDispose]: () => handle.close(),
  };
  return handle;
}

/**
 * Logs a warning when the heap in use after the cache loaded passes half of V8's limit: the
 * console mirrors every node it serves, so a namespace much larger than the default limit
 * (`ORRERY_CONSOLE_HEAP_MB`, bin/orrery-console) was sized for would make it collect constantly,
 * then run out of memory.
 */
export function warnIfHeapIsTight(logger: Logger, stats: { used_heap_size: number; heap_size_limit: number } = getHeapStatistics()): boolean {
  const usedMb = Math.round(stats.used_heap_size / 2 ** 20);
  const limitMb = Math.round(stats.heap_size_limit / 2 ** 20);
  if (stats.used_heap_size * 2 < stats.heap_size_limit) {
    logger.info({ heapUsedMb: usedMb, heapLimitMb: limitMb }, 'cache loaded');
    return false;
  }
  logger.warn({ heapUsedMb: usedMb, heapLimitMb: limitMb }, `the cache uses more than half of the heap limit: raise ORRERY_CONSOLE_HEAP_MB (now about ${limitMb} MB) to twice what is in use or more`);
  return true;
}
