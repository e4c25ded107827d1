/**
 * What every console route gets: the ZooKeeper client (writes, through the same store functions as
 * the CLI), the watch-fed cache (reads), the caller's authentication, the audit trail, and the
 * settings. Built once by `createConsole` (console.ts); tests build their own.
 */
import type { FastifyRequest } from 'fastify';
import type { Logger, Metrics, ZkClient } from '@orrery/core';
import type { Principal } from './access.js';
import type { ConsoleCache } from './console-cache.js';

/** One audited mutation: who (from the request), what, and the state before and after. */
export interface AuditEntry {
  /** What was done, `resource.verb`: `job.update`, `job.run`, `namespace.create`, `user.create`, … */
  action: string;
  namespace?: string;
  job?: string;
  /** The target when it is neither a namespace nor a job (an executor, a user, a token id). */
  target?: string;
  /** The state before the change (absent for a create), and after (absent for a delete). */
  before?: unknown;
  after?: unknown;
  /** Anything else worth keeping (a run's items and parameter, a batch's names). */
  details?: Record<string, unknown>;
}

/** Records audited mutations (see audit.ts); never throws into the request that made the change. */
export interface Auditor {
  record(request: FastifyRequest, entry: AuditEntry): Promise<void>;
}

/** Authenticates a request from its session cookie or its `Authorization: Bearer` token. */
export interface Authenticator {
  /** The caller, or undefined when the request carries no valid credentials. Reads the cache only. */
  authenticate(request: FastifyRequest): Promise<Principal | undefined>;
}

/** The console's shared dependencies. */
export interface ConsoleContext {
  zk: ZkClient;
  cache: ConsoleCache;
  logger: Logger;
  metrics: Metrics;
  auth: Authenticator;
  audit: Auditor;
  /** The executors' cluster token, to read run history and logs from them (undefined: runs unavailable). */
  clusterToken: string | undefined;
  /** How long a login lasts, in ms. */
  sessionTtlMs: number;
  /** The clock (epoch ms); tests pass their own. */
  now(): number;
}
