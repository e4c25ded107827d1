/**
 * The console's own state as read from the watch-fed cache: users, API tokens, the session secret
 * and the audit entries, parsed once per write (memoised by `mzxid`). Authentication and the
 * users, tokens and audit routes read only this: no ZooKeeper round trip per request.
 */
import { TOKEN_ID_PATTERN, USER_NAME_PATTERN, inspectNode, paths, type Check } from '@orrery/core';
import type { CachedNode } from '@orrery/core';
import type { ConsoleCache } from './console-cache.js';
import { checkUserRecord, type UserRecord } from '../store/users.js';
import { checkSessionSecret, checkTokenRecord, type TokenRecord } from '../store/tokens.js';
import { auditSequence, checkAuditRecord, type AuditEntryView } from '../store/audit.js';

/** Typed views of the console's subtree. */
export interface Accounts {
  user(name: string): { record: UserRecord; version: number } | undefined;
  /** Every readable user, sorted by name. */
  users(): Array<{ name: string; record: UserRecord; version: number }>;
  token(id: string): TokenRecord | undefined;
  /** Every readable token, sorted by id. */
  tokens(): Array<{ id: string; record: TokenRecord }>;
  /** The session secret's key, undefined until it exists. */
  secret(): Buffer | undefined;
  /** Every readable audit entry (any order). */
  auditEntries(): AuditEntryView[];
  /** The names of the audit entries as mirrored (for pruning). */
  auditNames(): string[];
}

const views = new WeakMap<ConsoleCache, Accounts>();

/** The accounts view of a cache (one per cache, shared by every caller). */
export function accountsOf(cache: ConsoleCache): Accounts {
  let view = views.get(cache);
  if (!view) {
    view = createAccounts(cache);
    views.set(cache, view);
  }
  return view;
}

function createAccounts(cache: ConsoleCache): Accounts {
  const memo = new Map<string, { mzxid: number; value: unknown }>();
  function parsed<T>(node: CachedNode | undefined, check: Check<T>): T | undefined {
    if (!node) return undefined;
    const hit = memo.get(node.path);
    if (hit && hit.mzxid === node.stat.mzxid) return hit.value as T | undefined;
    const reading = inspectNode(node.data, node.path, check);
    const value = reading.ok ? reading.value : undefined;
    memo.set(node.path, { mzxid: node.stat.mzxid, value });
    return value;
  }
  // Memo entries of deleted nodes are dropped when their parent's list no longer names them.
  function sweep(prefix: string, live: readonly string[]): void {
    const keep = new Set(live.map((n) => `${prefix}/${n}`));
    for (const key of memo.keys()) if (key.startsWith(`${prefix}/`) && !keep.has(key)) memo.delete(key);
  }

  const accounts: Accounts = {
    user(name) {
      if (!USER_NAME_PATTERN.test(name)) return undefined;
      const node = cache.consoleNode(paths.consoleUser(name));
      const record = parsed(node, checkUserRecord);
      return record && node ? { record, version: node.stat.version } : undefined;
    },
    users() {
      const names = cache.consoleChildren(paths.consoleUsers()).filter((n) => USER_NAME_PATTERN.test(n)).sort();
      sweep(paths.consoleUsers(), names);
      return names.flatMap((name) => {
        const u = accounts.user(name);
        return u ? [{ name, ...u }] : [];
      });
    },
    token(id) {
      if (!TOKEN_ID_PATTERN.test(id)) return undefined;
      return parsed(cache.consoleNode(paths.consoleToken(id)), checkTokenRecord);
    },
    tokens() {
      const ids = cache.consoleChildren(paths.consoleTokens()).filter((n) => TOKEN_ID_PATTERN.test(n)).sort();
      sweep(paths.consoleTokens(), ids);
      return ids.flatMap((id) => {
        const record = accounts.token(id);
        return record ? [{ id, record }] : [];
      });
    },
    secret() {
      const secret = parsed(cache.consoleNode(paths.consoleSecret()), checkSessionSecret);
      return secret ? Buffer.from(secret.key, 'base64') : undefined;
    },
    auditNames: () => cache.consoleChildren(paths.consoleAudit()),
    auditEntries() {
      const names = accounts.auditNames();
      sweep(paths.consoleAudit(), names);
      return names.flatMap((name) => {
        const id = auditSequence(name);
        if (id === undefined) return [];
        const record = parsed(cache.consoleNode(paths.consoleAuditEntry(name)), checkAuditRecord);
        return record ? [{ ...record, id }] : [];
      });
    },
  };
  return accounts;
}
