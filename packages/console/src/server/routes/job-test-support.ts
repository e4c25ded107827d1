/**
 * Test support for the job, history and import/export routes: a console app on a real ZooKeeper
 * (a unique root), with a test authenticator (an `x-test-user` header naming a principal below)
 * and an auditor that keeps its entries. Not for production code paths.
 */
import { createMetrics, createZkClient, silentLogger, type ZkClient } from '@orrery/core';
import { uniqueRoot } from '@orrery/core/testing';
import type { FastifyRequest, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Principal } from '../access.js';
import { createConsoleApp, type ConsoleRoutes } from '../app.js';
import { createConsoleCache, type ConsoleCache } from '../console-cache.js';
import type { AuditEntry, ConsoleContext } from '../context.js';
import { importExportRoutes } from './import-export.js';
import { jobHistoryRoutes } from './job-history.js';
import { jobRoutes } from './jobs.js';

/** The test callers: an admin, and an owner, an operator and a viewer of namespace `shop`. */
export const TEST_PRINCIPALS: Record<string, Principal> = {
  root: { user: 'root', admin: true, roles: {}, via: 'token' },
  ann: { user: 'ann', admin: false, roles: { shop: 'owner' }, via: 'token' },
  oli: { user: 'oli', admin: false, roles: { shop: 'operator' }, via: 'token' },
  vic: { user: 'vic', admin: false, roles: { shop: 'viewer' }, via: 'token' },
};

/** What warnings the history logged. */
export interface WarnedEntry {
  object: Record<string, unknown>;
  message: string;
}

/** A console on a real ZooKeeper for one test file. */
export interface TestConsole {
  zk: ZkClient;
  cache: ConsoleCache;
  root: string;
  audited: AuditEntry[];
  warned: WarnedEntry[];
  app: ReturnType<typeof createConsoleApp>;
  /** `app.inject()` as `user` (a key of {@link TEST_PRINCIPALS}; undefined: no credentials). */
  as(user: string | undefined, options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** Starts a console on `root` (default: a fresh unique root). */
export async function startTestConsole(zkConnect: string, label: string, options: { root?: string; routes?: readonly ConsoleRoutes[] } = {}): Promise<TestConsole> {
  const root = options.root ?? uniqueRoot(label);
  const zk = createZkClient({ connect: zkConnect, root });
  await zk.start();
  const cache = createConsoleCache(zk);
  await cache.start();
  const audited: AuditEntry[] = [];
  const warned: WarnedEntry[] = [];
  const logger = silentLogger();
  const originalWarn = logger.warn.bind(logger);
  logger.warn = ((object: Record<string, unknown>, message: string) => {
    warned.push({ object, message });
    originalWarn(object, message);
  }) as typeof logger.warn;
  const ctx: ConsoleContext = {
    zk, cache, logger, metrics: createMetrics(),
    auth: { authenticate: async (request: FastifyRequest) => TEST_PRINCIPALS[String(request.headers['x-test-user'] ?? '')] },
    audit: { record: async (_request, entry) => { audited.push(entry); } },
    clusterToken: undefined, sessionTtlMs: 3_600_000, now: () => Date.now(),
  };
  const app = createConsoleApp(ctx, { routes: options.routes ?? [jobRoutes, jobHistoryRoutes, importExportRoutes] });
  await app.ready();
  return {
    zk, cache, root, audited, warned, app,
    as: (user, inject) => app.inject({ ...inject, headers: { ...(user ? { 'x-test-user': user } : {}), ...(inject.headers ?? {}) } }),
    async close() {
      await app.close();
      await cache.close();
      await zk.close();
    },
  };
}
