/**
 * The console's {@link Auditor}: every mutation becomes one entry in ZooKeeper's audit log
 * (store/audit.ts) and one line in the server log (`msg: "audit"`).
 *
 * What it guarantees: who (the request's principal: user, session or token, the token's id), when,
 * from which address (`request.ip`), what, before and after — with secrets redacted and big values
 * cut (see store/audit.ts). Only changes are recorded: a refused attempt (a failed login) is the
 * route's to log and count, never an entry that anyone could write to push real ones out. It never throws into the request that made the change: a failed write
 * is logged as an error (the change itself has happened).
 */
import { toError, type Logger, type ZkClient } from '@orrery/core';
import type { FastifyRequest } from 'fastify';
import type { Auditor, AuditEntry } from './context.js';
import type { ConsoleCache } from './console-cache.js';
import { accountsOf } from './accounts.js';
import { AUDIT_MAX_ENTRIES, appendAudit, auditEntriesToPrune, buildAuditRecord, pruneAudit } from '../store/audit.js';

/** Options of {@link createAuditor}. */
export interface AuditorOptions {
  zk: ZkClient;
  cache: ConsoleCache;
  logger: Logger;
  now: () => number;
  /** How many entries to keep. Default {@link AUDIT_MAX_ENTRIES}. */
  maxEntries?: number;
}

/** Creates the auditor. */
export function createAuditor(options: AuditorOptions): Auditor {
  const bound = options.maxEntries ?? AUDIT_MAX_ENTRIES;
  let pruning: Promise<void> | undefined;
  const prune = (): void => {
    if (pruning) return;
    const names = auditEntriesToPrune(accountsOf(options.cache).auditNames(), bound);
    if (names.length === 0) return;
    pruning = pruneAudit(options.zk, names)
      .then(() => undefined, (error: unknown) => options.logger.warn({ err: toError(error) }, 'audit log prune failed'))
      .finally(() => { pruning = undefined; });
  };
  return {
    async record(request: FastifyRequest, entry: AuditEntry): Promise<void> {
      const principal = request.principal;
      const record = buildAuditRecord({
        at: options.now(),
        user: principal?.user ?? null,
        via: principal?.via ?? null,
        ...(principal?.tokenId !== undefined ? { tokenId: principal.tokenId } : {}),
        ip: request.ip,
        action: entry.action,
        ...(entry.namespace !== undefined ? { namespace: entry.namespace } : {}),
        ...(entry.job !== undefined ? { job: entry.job } : {}),
        ...(entry.target !== undefined ? { target: entry.target } : {}),
        before: entry.before,
        after: entry.after,
        ...(entry.details !== undefined ? { details: entry.details } : {}),
      });
      options.logger.info({ audit: record }, 'audit');
      try {
        await appendAudit(options.zk, record);
      } catch (error) {
        options.logger.error({ err: toError(error), action: record.action, user: record.user }, 'audit entry not written');
        return;
      }
      prune();
    },
  };
}
