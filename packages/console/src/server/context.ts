/**
 * What every console route gets: the ZooKeeper client (writes, through the same store functions as
 * the CLI), the watch-fed cache (reads), the caller's authentication, the audit trail, and the
 * settings. Built once by `createConsole` (console.ts); tests build their own.
 */
import type { FastifyRequest } from 'fastify';
import type { Logger, Metrics, ZkClient } from '@orrery/core';
import type { Principal } from './access.js';
import type { ConsoleCache } from './console-cache.js';
import type { AuditEntry } from '../store/audit.js';

/** One audited mutation (the store's type: routes and the audit log share it). */
export type { AuditEntry };

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
