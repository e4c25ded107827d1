/**
 * The audit log in ZooKeeper: one persistent-sequential node per mutation under `/console/audit`
 * (`entry-<10-digit sequence>`), the oldest pruned beyond {@link AUDIT_MAX_ENTRIES}.
 *
 * What it guarantees:
 * - Entries are ordered by ZooKeeper's sequence (the order their creates reached the leader), the
 *   same on every console; the sequence is the entry's id and the `before` cursor of a listing.
 * - No entry holds a secret: fields named like one (`password`, `passwordHash`, `token`, `secret`,
 *   `hash`, `authorization`, `cookie`, …) are replaced by `[redacted]` at any depth.
 * - Each entry is bounded: a `before`, `after` or `details` larger than
 *   {@link AUDIT_VALUE_MAX_BYTES} as JSON is replaced by `{truncated: true, bytes, preview}`
 *   (`preview`: the first part of its JSON), so an entry stays under {@link AUDIT_ENTRY_MAX_BYTES}.
 *
 * Not guaranteed: an exact bound — consoles prune from their own (watch-fed) view of the list, so
 * at a burst the log may hold a few more than the bound for a moment.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  AUDIT_ENTRY_NAME_PATTERN,
  checkWith,
  encodeJson,
  hasErrorCode,
  paths,
  type CheckResult,
  type ZkClient,
} from '@orrery/core';

/** How many entries the log keeps; the oldest beyond it are deleted. */
export const AUDIT_MAX_ENTRIES = 10_000;
/** The largest `before`, `after` or `details` kept whole, in bytes of JSON. */
export const AUDIT_VALUE_MAX_BYTES = 2048;
/** The largest entry, in bytes of JSON. */
export const AUDIT_ENTRY_MAX_BYTES = 8192;
/** Longest string field (action, target, user agent…) kept, in characters. */
const AUDIT_TEXT_MAX = 256;
/** What replaces a secret. */
export const REDACTED = '[redacted]';

/** Field names whose values are never kept (compared lowercase). */
const SECRET_FIELDS = new Set(['password', 'passwordhash', 'currentpassword', 'newpassword', 'secret', 'token', 'hash', 'authorization', 'cookie', 'clustertoken', 'sessionsecret', 'zkauth']);

/** One stored audit entry (the data of an `entry-<seq>` node). */
export const AuditRecordSchema = Type.Object({
  /** Epoch ms. */
  at: Type.Integer({ minimum: 0 }),
  /** Who: the user (null: a request without credentials; failed logins are not recorded). */
  user: Type.Union([Type.String({ maxLength: AUDIT_TEXT_MAX }), Type.Null()]),
  /** How they authenticated. */
  via: Type.Union([Type.Literal('session'), Type.Literal('token'), Type.Null()]),
  tokenId: Type.Optional(Type.String({ maxLength: 64 })),
  /** The client's address (`request.ip`: the proxy's unless `--trust-proxy`). */
  ip: Type.String({ maxLength: AUDIT_TEXT_MAX }),
  /** `resource.verb`: `job.update`, `user.create`, `auth.login`, … */
  action: Type.String({ minLength: 1, maxLength: AUDIT_TEXT_MAX }),
  namespace: Type.Optional(Type.String({ maxLength: AUDIT_TEXT_MAX })),
  job: Type.Optional(Type.String({ maxLength: AUDIT_TEXT_MAX })),
  target: Type.Optional(Type.String({ maxLength: AUDIT_TEXT_MAX })),
  before: Type.Optional(Type.Unknown()),
  after: Type.Optional(Type.Unknown()),
  details: Type.Optional(Type.Unknown()),
}, { additionalProperties: false });
/** A stored audit entry. */
export type AuditRecord = Static<typeof AuditRecordSchema>;
/** An entry with its id (the sequence of its node). */
export type AuditEntryView = AuditRecord & { id: number };

/** Validates a stored audit entry. */
export function checkAuditRecord(input: unknown): CheckResult<AuditRecord> {
  return checkWith<AuditRecord>(AuditRecordSchema, input, 'audit entry');
}

/** The sequence of an entry's node name, or undefined for another name. */
export function auditSequence(name: string): number | undefined {
  const m = AUDIT_ENTRY_NAME_PATTERN.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** A copy of `value` with every secret-named field replaced by {@link REDACTED}, at any depth (pure). */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > 32) return '[too deep]';
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SECRET_FIELDS.has(k.toLowerCase()) ? REDACTED : redactSecrets(v, depth + 1);
  }
  return out;
}

/** The marker that replaces a value too large to keep. */
export interface TruncatedValue {
  truncated: true;
  /** Bytes of the whole value as JSON. */
  bytes: number;
  /** The first part of its JSON. */
  preview: string;
}

/** `value` itself when its JSON fits in `maxBytes`, else a {@link TruncatedValue} (pure). */
export function cutValue(value: unknown, maxBytes = AUDIT_VALUE_MAX_BYTES): unknown {
  if (value === undefined) return undefined;
  let json: string;
  try {
    json = JSON.stringify(value) ?? 'null';
  } catch {
    return { truncated: true, bytes: 0, preview: '(not serialisable)' } satisfies TruncatedValue;
  }
  const bytes = Buffer.byteLength(json);
  if (bytes <= maxBytes) return value;
  // Half the budget: the marker's own fields and JSON escaping of the preview must fit too.
  return { truncated: true, bytes, preview: Buffer.from(json).subarray(0, Math.floor(maxBytes / 2)).toString('utf8').replace(/\uFFFD+$/, '') } satisfies TruncatedValue;
}

const text = (s: string): string => (s.length > AUDIT_TEXT_MAX ? `${s.slice(0, AUDIT_TEXT_MAX - 1)}…` : s);

/** One audited mutation: what was done, to what, and the state before and after. */
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

/** What a caller records (before redaction and bounds): the entry, with who, when and from where. */
export interface AuditInput extends AuditEntry {
  at: number;
  user: string | null;
  via: 'session' | 'token' | null;
  tokenId?: string;
  ip: string;
}

/** The entry to store: secrets redacted, long texts cut, big values replaced by markers (pure). */
export function buildAuditRecord(input: AuditInput): AuditRecord {
  const record: AuditRecord = {
    at: input.at,
    user: input.user === null ? null : text(input.user),
    via: input.via,
    ...(input.tokenId !== undefined ? { tokenId: text(input.tokenId) } : {}),
    ip: text(input.ip),
    action: text(input.action) || 'unknown',
    ...(input.namespace !== undefined ? { namespace: text(input.namespace) } : {}),
    ...(input.job !== undefined ? { job: text(input.job) } : {}),
    ...(input.target !== undefined ? { target: text(input.target) } : {}),
  };
  for (const key of ['before', 'after', 'details'] as const) {
    const value = cutValue(redactSecrets(input[key]));
    if (value !== undefined) record[key] = value;
  }
  return record;
}

/** Appends an entry; resolves its id (sequence). */
export async function appendAudit(zk: ZkClient, record: AuditRecord): Promise<number> {
  const data = encodeJson(record);
  let created: string;
  try {
    created = await zk.create(paths.consoleAuditEntry(), data, 'persistent-sequential');
  } catch (error) {
    if (!hasErrorCode(error, 'no-node')) throw error;
    await zk.mkdirp(paths.consoleAudit());
    created = await zk.create(paths.consoleAuditEntry(), data, 'persistent-sequential');
  }
  return auditSequence(created.split('/').at(-1) ?? '') ?? -1;
}

/** The names to delete so that at most `bound` entries remain: the oldest (pure). */
export function auditEntriesToPrune(names: readonly string[], bound = AUDIT_MAX_ENTRIES): string[] {
  const entries = names.filter((n) => auditSequence(n) !== undefined);
  if (entries.length <= bound) return [];
  return entries.sort((a, b) => auditSequence(a)! - auditSequence(b)!).slice(0, entries.length - bound);
}

/** Deletes the given entries (one already gone is fine: another console pruned it). */
export async function pruneAudit(zk: ZkClient, names: readonly string[]): Promise<number> {
  let deleted = 0;
  for (const name of names) {
    try {
      await zk.delete(paths.consoleAuditEntry(name));
      deleted += 1;
    } catch (error) {
      if (!hasErrorCode(error, 'no-node')) throw error;
    }
  }
  return deleted;
}

/** A listing's filter. */
export interface AuditFilter {
  namespace?: string;
  job?: string;
  user?: string;
  action?: string;
  /** Only entries older than this id. */
  before?: number;
  /** At most this many (newest first). */
  limit: number;
  /** Which entries the caller may see at all. */
  visible: (entry: AuditEntryView) => boolean;
}

/**
 * The entries matching `filter`, newest first, at most `limit`, and the cursor of the next page
 * (pure). `entries` may come in any order.
 */
export function selectAudit(entries: readonly AuditEntryView[], filter: AuditFilter): { entries: AuditEntryView[]; next?: number } {
  const sorted = [...entries].sort((a, b) => b.id - a.id);
  const out: AuditEntryView[] = [];
  for (const e of sorted) {
    if (filter.before !== undefined && e.id >= filter.before) continue;
    if (filter.namespace !== undefined && e.namespace !== filter.namespace) continue;
    if (filter.job !== undefined && e.job !== filter.job) continue;
    if (filter.user !== undefined && e.user !== filter.user) continue;
    if (filter.action !== undefined && e.action !== filter.action) continue;
    if (!filter.visible(e)) continue;
    if (out.length === filter.limit) return { entries: out, next: out.at(-1)!.id };
    out.push(e);
  }
  return { entries: out };
}
