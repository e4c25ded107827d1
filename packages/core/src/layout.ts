/**
 * The ZooKeeper layout: the only module that builds or parses Orrery's ZooKeeper paths.
 * Every path is relative to the client's root (default `/orrery`). `docs/zk-layout.md` shows the tree.
 *
 * Every builder validates the names it splices in, so a path can never escape its place
 * (no `/`, no `..`, no empty segment).
 */
import { OrreryError } from './errors.js';

/*
 * No name may be `__proto__`: Orrery keys plain objects by these names (an allocation's jobs by job
 * name, a job's items by executor name, a summary's jobs), and assigning that key sets the object's
 * prototype instead — a job of that name was accepted and never assigned, an executor of that name
 * silently lost its shards (neither assigned nor reported unassigned).
 */
/** Job (and node handler) names: `[A-Za-z0-9_-]{1,64}`, not `__proto__`. */
export const JOB_NAME_PATTERN = /^(?!__proto__$)[A-Za-z0-9_-]{1,64}$/;
/** Namespace and executor names: letters, digits, `_`, `-`, `.` (host names), 1–128, not `.`/`..`/`__proto__`. */
export const NODE_NAME_PATTERN = /^(?!\.{1,2}$|__proto__$)[A-Za-z0-9_.-]{1,128}$/;

function segment(kind: string, value: string, pattern: RegExp): string {
  if (typeof value !== 'string' || !pattern.test(value)) {
    throw new OrreryError('validation', `${kind} '${String(value)}' is invalid: it must match ${pattern.source}`, {
      details: { issues: [{ field: kind, rule: 'pattern', message: `${kind} must match ${pattern.source}` }] },
    });
  }
  return value;
}
const ns = (name: string): string => segment('namespace', name, NODE_NAME_PATTERN);
const job = (name: string): string => segment('job', name, JOB_NAME_PATTERN);
const ex = (name: string): string => segment('executor', name, NODE_NAME_PATTERN);
/** Console user names: letters, digits, `_`, `-`, `.`, 1–64, not `.`/`..`/`__proto__`. */
export const USER_NAME_PATTERN = /^(?!\.{1,2}$|__proto__$)[A-Za-z0-9_.-]{1,64}$/;
/** Console API token ids: 16 lowercase hex digits. */
export const TOKEN_ID_PATTERN = /^[0-9a-f]{16}$/;
/** The prefix of an audit entry's name (persistent-sequential: ZooKeeper appends 10 digits). */
export const AUDIT_ENTRY_PREFIX = 'entry-';
/** An audit entry's node name as listed: the prefix and its 10-digit sequence. */
export const AUDIT_ENTRY_NAME_PATTERN = /^entry-(\d{10})$/;
const user = (name: string): string => segment('user', name, USER_NAME_PATTERN);
const tokenId = (id: string): string => segment('token', id, TOKEN_ID_PATTERN);
const auditEntry = (name: string): string => segment('audit entry', name, AUDIT_ENTRY_NAME_PATTERN);
const item = (n: number): string => {
  if (!Number.isInteger(n) || n < 0) throw new OrreryError('validation', `shard item '${n}' must be an integer ≥ 0`);
  return String(n);
};

/**
 * Command node names as read from ZooKeeper: any single segment (no `/`, no control character, not
 * `.` or `..`), so that a node someone made by hand can still be read, logged and pruned; what the
 * name means is {@link parseCommandName}'s business.
 */
export const COMMAND_NODE_PATTERN = /^(?!\.{1,2}$)[^/\u0000-\u001f\u007f]{1,1024}$/;
const commandNode = (name: string): string => segment('command', name, COMMAND_NODE_PATTERN);
const fireTimeText = (t: number): string => {
  if (!Number.isSafeInteger(t) || t < 0) {
    throw new OrreryError('validation', `fire time '${t}' must be an integer number of epoch ms ≥ 0`, {
      details: { issues: [{ field: 'fireTime', rule: 'integer', message: 'fireTime must be an integer number of epoch ms ≥ 0' }] },
    });
  }
  return String(t);
};

/** The prefix of a persistent-sequential command's name: ZooKeeper appends a 10-digit sequence. */
export const SEQUENTIAL_COMMAND_PREFIX = 'cmd-';

/**
 * Builders of command node names, one per form (see `docs/zk-layout.md`). A deterministic name is the
 * exactly-once key: whoever creates it first wins, anyone else gets `node-exists`.
 */
export const commandName = {
  /** Run-now and stop from people (CLI, console): created persistent-sequential, so each is new. */
  sequential: () => SEQUENTIAL_COMMAND_PREFIX,
  /** Run `job` once for `upstream`'s completed fire `fireTime` (epoch ms). */
  downstream: (upstream: string, fireTime: number) => `downstream-${job(upstream)}-${fireTimeText(fireTime)}`,
  /** From the job leader: re-run `item`'s crashed fire `fireTime` (epoch ms). */
  failover: (n: number, fireTime: number) => `failover-${item(n)}-${fireTimeText(fireTime)}`,
  /** To the job leader: reset `item`'s unreadable shard node (one request per item at a time). */
  repair: (n: number) => `repair-${item(n)}`,
} as const;

/** A command node name, parsed by {@link parseCommandName}. */
export type CommandNameParts =
  | { form: 'sequential'; sequence: number }
  | { form: 'downstream'; upstream: string; fireTime: number }
  | { form: 'failover'; item: number; fireTime: number }
  | { form: 'repair'; item: number };

const ITEM_TEXT = '(0|[1-9]\\d{0,8})';
const TIME_TEXT = '(0|[1-9]\\d{0,15})';
const COMMAND_NAME_FORMS = {
  // ZooKeeper's sequence is a signed 32-bit counter printed as %010d (negative once it wraps).
  sequential: /^cmd-(-?\d{10})$/,
  downstream: new RegExp(`^downstream-([A-Za-z0-9_-]{1,64})-${TIME_TEXT}$`),
  failover: new RegExp(`^failover-${ITEM_TEXT}-${TIME_TEXT}$`),
  repair: new RegExp(`^repair-${ITEM_TEXT}$`),
};

/**
 * What a command node's name says (the inverse of {@link commandName}); `undefined` for a name of
 * no known form. A downstream name splits at its last `-`: job names may hold `-`, fire times not.
 */
export function parseCommandName(name: string): CommandNameParts | undefined {
  if (typeof name !== 'string') return undefined;
  let m = COMMAND_NAME_FORMS.sequential.exec(name);
  if (m) return { form: 'sequential', sequence: Number(m[1]) };
  m = COMMAND_NAME_FORMS.downstream.exec(name);
  if (m && Number.isSafeInteger(Number(m[2]))) return { form: 'downstream', upstream: m[1]!, fireTime: Number(m[2]) };
  m = COMMAND_NAME_FORMS.failover.exec(name);
  if (m && Number.isSafeInteger(Number(m[2]))) return { form: 'failover', item: Number(m[1]), fireTime: Number(m[2]) };
  m = COMMAND_NAME_FORMS.repair.exec(name);
  if (m) return { form: 'repair', item: Number(m[1]) };
  return undefined;
}

/** A reshard request node's name (Orrery names them `req-<sequence>`). */
export const REQUEST_NODE_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
const requestNode = (name: string): string => segment('request', name, REQUEST_NODE_PATTERN);

/** Builders for every path Orrery uses. */
export const paths = {
  namespaces: () => '/namespaces',
  /** Data: NamespaceInfo JSON. */
  namespace: (namespace: string) => `/namespaces/${ns(namespace)}`,
  /** Data: ShardingState — the allocator's members and round for the namespace. */
  namespaceSharding: (namespace: string) => `/namespaces/${ns(namespace)}/sharding`,
  jobs: (namespace: string) => `/namespaces/${ns(namespace)}/jobs`,
  /** Data: the JobConfig JSON (one node: one watch, one compare-and-set for any change). */
  job: (namespace: string, name: string) => `/namespaces/${ns(namespace)}/jobs/${job(name)}`,
  /** Data: the allocator's Assignment for the job. */
  jobAssignment: (namespace: string, name: string) => `${paths.job(namespace, name)}/assignment`,
  /**
   * Data: `{input, appliedAt}` — the job's entry in the file `orrery apply` last wrote it from (the
   * fields the file set), for a three-way merge on the next apply (see docs/cli.md).
   */
  jobLastApplied: (namespace: string, name: string) => `${paths.job(namespace, name)}/last-applied`,
  /** Data: `{epoch}` written by the job leader once the assignment is safe to run. */
  jobApplied: (namespace: string, name: string) => `${paths.job(namespace, name)}/applied`,
  /** Children: ephemeral-sequential latch nodes of the job's leader latch. */
  jobLeader: (namespace: string, name: string) => `${paths.job(namespace, name)}/leader`,
  jobShards: (namespace: string, name: string) => `${paths.job(namespace, name)}/shards`,
  /** Data: ShardState of one item. */
  jobShard: (namespace: string, name: string, n: number) => `${paths.jobShards(namespace, name)}/${item(n)}`,
  /** Children: command nodes (run-now / stop, downstream, failover, repair; see {@link commandName}). */
  jobCommands: (namespace: string, name: string) => `${paths.job(namespace, name)}/commands`,
  /**
   * Data: a Command JSON. `command` is a name from {@link commandName} (for a persistent-sequential
   * create, the prefix), or a child name as listed.
   */
  jobCommand: (namespace: string, name: string, command: string) => `${paths.jobCommands(namespace, name)}/${commandNode(command)}`,
  executors: (namespace: string) => `/namespaces/${ns(namespace)}/executors`,
  executor: (namespace: string, name: string) => `/namespaces/${ns(namespace)}/executors/${ex(name)}`,
  /** Ephemeral; data: ExecutorPresence. */
  executorPresence: (namespace: string, name: string) => `${paths.executor(namespace, name)}/presence`,
  /** Data: ExecutorMeta (`noTraffic`, …), written by people. */
  executorMeta: (namespace: string, name: string) => `${paths.executor(namespace, name)}/meta`,
  /** Data: the allocator's summary of the executor's items. */
  executorAssignment: (namespace: string, name: string) => `${paths.executor(namespace, name)}/assignment`,
  /** Children: the allocator leader latch; the leader's latch node czxid is the allocator epoch. */
  shardingLeader: () => '/sharding/leader',
  /** Persistent-sequential reshard requests (children name the namespace and job). */
  shardingRequests: () => '/sharding/requests',
  /**
   * One reshard request as listed (`req-0000000042`); with no name, the prefix for a
   * persistent-sequential create.
   */
  shardingRequest: (name?: string) => `/sharding/requests/${name === undefined ? 'req-' : requestNode(name)}`,
  console: () => '/console',
  /** Children: one per console user. */
  consoleUsers: () => '/console/users',
  /** Data: the user's record JSON {passwordHash, admin, roles, sessionEpoch, createdAt, updatedAt}. */
  consoleUser: (name: string) => `/console/users/${user(name)}`,
  /** Children: one per API token, named by its id. */
  consoleTokens: () => '/console/tokens',
  /** Data: the token's record JSON {user, userCreatedAt, name, hash (sha256), createdAt, expiresAt}. */
  consoleToken: (id: string) => `/console/tokens/${tokenId(id)}`,
  /** Data: `{key, createdAt}` — the HMAC key of session cookies, created once by the first console. */
  consoleSecret: () => '/console/secret',
  /** Children: the audit log's persistent-sequential entries (`entry-<seq>`), the oldest pruned. */
  consoleAudit: () => '/console/audit',
  /** An audit entry as listed; with no name, the prefix for a persistent-sequential create. */
  consoleAuditEntry: (name?: string) => `/console/audit/${name === undefined ? AUDIT_ENTRY_PREFIX : auditEntry(name)}`,
  /** Children: a node per namespace whose jobs have a config history (the console's job-history.ts). */
  consoleHistory: () => '/console/history',
  /** Children: a node per job of the namespace that has a config history. */
  namespaceHistory: (namespace: string) => `/console/history/${ns(namespace)}`,
  /** Children: the kept versions of one job's config, named by {@link historyVersionName}. */
  jobHistory: (namespace: string, name: string) => `/console/history/${ns(namespace)}/${job(name)}`,
  /** Data: one kept version of a job's config, `{version, author, at, config}`. */
  jobHistoryVersion: (namespace: string, name: string, version: number) => `${paths.jobHistory(namespace, name)}/${historyVersionName(version)}`,
} as const;

/**
 * A config history node's name: the job node's version (ZooKeeper's int32 `stat.version`)
 * zero-padded to 10 digits, so names sort as versions do.
 */
export function historyVersionName(version: number): string {
  if (!Number.isInteger(version) || version < 0 || version > 2_147_483_647) {
    throw new OrreryError('validation', `config version '${version}' must be an integer from 0 to 2147483647`, {
      details: { issues: [{ field: 'version', rule: 'range', message: 'version must be an integer from 0 to 2147483647' }] },
    });
  }
  return String(version).padStart(10, '0');
}

/** The version a config history node's name holds (the inverse of {@link historyVersionName}); undefined for any other name. */
export function parseHistoryVersionName(name: string): number | undefined {
  if (typeof name !== 'string' || !/^\d{10}$/.test(name)) return undefined;
  const version = Number(name);
  return version <= 2_147_483_647 ? version : undefined;
}

/** What a path is, as parsed by {@link matchPath}. */
export type PathMatch =
  | { kind: 'namespaces' }
  | { kind: 'namespace'; namespace: string }
  | { kind: 'namespace-sharding'; namespace: string }
  | { kind: 'jobs'; namespace: string }
  | { kind: 'job'; namespace: string; job: string }
  | { kind: 'job-assignment'; namespace: string; job: string }
  | { kind: 'job-applied'; namespace: string; job: string }
  | { kind: 'job-last-applied'; namespace: string; job: string }
  | { kind: 'job-leader'; namespace: string; job: string }
  | { kind: 'job-leader-node'; namespace: string; job: string; node: string }
  | { kind: 'job-shards'; namespace: string; job: string }
  | { kind: 'job-shard'; namespace: string; job: string; item: number }
  | { kind: 'job-commands'; namespace: string; job: string }
  /** `command`: what the node's name says; `undefined` for a name of no known form. */
  | { kind: 'job-command'; namespace: string; job: string; node: string; command: CommandNameParts | undefined }
  | { kind: 'executors'; namespace: string }
  | { kind: 'executor'; namespace: string; executor: string }
  | { kind: 'executor-presence'; namespace: string; executor: string }
  | { kind: 'executor-meta'; namespace: string; executor: string }
  | { kind: 'executor-assignment'; namespace: string; executor: string };

const JOB_CHILDREN = {
  assignment: 'job-assignment',
  applied: 'job-applied',
  'last-applied': 'job-last-applied',
  leader: 'job-leader',
  shards: 'job-shards',
  commands: 'job-commands',
} as const;
const EXECUTOR_CHILDREN = {
  presence: 'executor-presence',
  meta: 'executor-meta',
  assignment: 'executor-assignment',
} as const;

/** Parses a path built by {@link paths} (namespace part only); undefined for anything else. */
export function matchPath(path: string): PathMatch | undefined {
  const s = path.split('/');
  if (s[0] !== '' || s[1] !== 'namespaces') return undefined;
  const [, , namespace, area, name, child, grandchild, extra] = s;
  if (namespace === undefined) return { kind: 'namespaces' };
  if (!NODE_NAME_PATTERN.test(namespace)) return undefined;
  if (area === undefined) return { kind: 'namespace', namespace };
  if (extra !== undefined) return undefined;
  if (area === 'sharding') return name === undefined ? { kind: 'namespace-sharding', namespace } : undefined;
  if (area === 'jobs') {
    if (name === undefined) return { kind: 'jobs', namespace };
    if (!JOB_NAME_PATTERN.test(name)) return undefined;
    if (child === undefined) return { kind: 'job', namespace, job: name };
    const kind = JOB_CHILDREN[child as keyof typeof JOB_CHILDREN];
    if (!kind) return undefined;
    if (grandchild === undefined) return { kind, namespace, job: name };
    if (kind === 'job-shards' && /^(0|[1-9]\d{0,8})$/.test(grandchild)) {
      return { kind: 'job-shard', namespace, job: name, item: Number(grandchild) };
    }
    if (kind === 'job-leader') return { kind: 'job-leader-node', namespace, job: name, node: grandchild };
    if (kind === 'job-commands') {
      return COMMAND_NODE_PATTERN.test(grandchild) ? { kind: 'job-command', namespace, job: name, node: grandchild, command: parseCommandName(grandchild) } : undefined;
    }
    return undefined;
  }
  if (area === 'executors') {
    if (name === undefined) return { kind: 'executors', namespace };
    if (!NODE_NAME_PATTERN.test(name)) return undefined;
    if (child === undefined) return { kind: 'executor', namespace, executor: name };
    const kind = EXECUTOR_CHILDREN[child as keyof typeof EXECUTOR_CHILDREN];
    if (!kind || grandchild !== undefined) return undefined;
    return { kind, namespace, executor: name };
  }
  return undefined;
}
