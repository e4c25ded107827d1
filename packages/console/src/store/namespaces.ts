/**
 * Namespace administration over ZooKeeper (used by the CLI and, later, the console API).
 */
import {
  OrreryError,
  encodeJson,
  paths,
  readJson,
  hasErrorCode,
  inspectNode,
  checkNamespaceInfo,
  parseNamespaceInfo,
  NODE_NAME_PATTERN,
  type NamespaceInfo,
  type ZkClient,
} from '@orrery/core';

/** Throws a `validation` error unless `name` is a valid namespace name. */
export function assertNamespaceName(name: string): void {
  if (!NODE_NAME_PATTERN.test(name)) {
    throw new OrreryError('validation', `namespace name '${name}' is invalid: use letters, digits, '.', '_' and '-', 1 to 128 characters`, {
      details: { issues: [{ field: 'namespace', rule: 'pattern', message: `namespace: must match ${NODE_NAME_PATTERN.source}` }] },
    });
  }
}

/** Creates a namespace with its settings; `already-exists` when it is there. */
export async function createNamespace(zk: ZkClient, name: string, settings: Record<string, unknown> = {}, now = Date.now()): Promise<NamespaceInfo> {
  assertNamespaceName(name);
  const info = parseNamespaceInfo({ ...settings, createdAt: now });
  await zk.mkdirp(paths.namespaces());
  try {
    await zk.create(paths.namespace(name), encodeJson(info));
  } catch (error) {
    if (hasErrorCode(error, 'node-exists')) throw new OrreryError('already-exists', `namespace '${name}' already exists`, { details: { namespace: name } });
    throw error;
  }
  // The two containers are created here so that watchers of a new namespace find them; a crash
  // between these creates leaves a valid namespace (readers create missing containers too).
  await zk.mkdirp(paths.jobs(name));
  await zk.mkdirp(paths.executors(name));
  return info;
}

/** A namespace as listed: its settings, or the problem when its node holds invalid data. */
export type NamespaceView = { name: string; info: NamespaceInfo; problem?: undefined } | { name: string; info?: undefined; problem: string };

/** Every namespace with its settings, sorted by name; a broken namespace node is listed with its problem. */
export async function listNamespaces(zk: ZkClient): Promise<NamespaceView[]> {
  let names: string[];
  try {
    names = await zk.getChildren(paths.namespaces());
  } catch (error) {
    if (hasErrorCode(error, 'no-node')) return [];
    throw error;
  }
  const out: NamespaceView[] = [];
  for (const name of names.filter((n) => NODE_NAME_PATTERN.test(n))) {
    const path = paths.namespace(name);
    const node = await zk.get(path).catch((error: unknown) => {
      if (hasErrorCode(error, 'no-node')) return undefined;
      throw error;
    });
    if (!node) continue;
    // A namespace node holding nothing is an older or hand-made namespace with default settings.
    const checked = inspectNode(node.data ?? Buffer.from('{}'), path, checkNamespaceInfo);
    out.push(checked.ok ? { name, info: checked.value } : { name, problem: checked.problem });
  }
  return out;
}

/** Throws `not-found` unless the namespace exists. */
export async function assertNamespaceExists(zk: ZkClient, name: string): Promise<void> {
  assertNamespaceName(name);
  if (!(await zk.exists(paths.namespace(name)))) {
    throw new OrreryError('not-found', `namespace '${name}' does not exist (create it with: orrery ns create ${name})`, { details: { namespace: name } });
  }
}

/**
 * Deletes a namespace. Refuses (`conflict`) while it has jobs or online executors, unless `force`.
 */
export async function deleteNamespace(zk: ZkClient, name: string, options: { force?: boolean } = {}): Promise<void> {
  await assertNamespaceExists(zk, name);
  // Only a missing container means "none": a connection loss must not read as an empty namespace.
  const none = (error: unknown): string[] => {
    if (hasErrorCode(error, 'no-node')) return [];
    throw error;
  };
  const jobs = await zk.getChildren(paths.jobs(name)).catch(none);
  const executors = await zk.getChildren(paths.executors(name)).catch(none);
  const online: string[] = [];
  for (const e of executors) if (NODE_NAME_PATTERN.test(e) && (await zk.exists(paths.executorPresence(name, e)))) online.push(e);
  // Even with force: a running executor registers again as soon as its presence is deleted, so the
  // delete could not finish — and would have deleted the jobs on its way. Refused before any write.
  if (online.length > 0 && options.force) {
    throw new OrreryError('conflict', `namespace '${name}' has ${online.length} running executor(s) (${online.slice(0, 5).join(', ')}${online.length > 5 ? ', …' : ''}); stop them first — a running executor registers again as soon as it is removed`, {
      details: { namespace: name, jobs: jobs.length, onlineExecutors: online.length },
    });
  }
  if (!options.force && (jobs.length > 0 || online.length > 0)) {
    throw new OrreryError('conflict', `namespace '${name}' has ${jobs.length} job(s) and ${online.length} online executor(s); stop its executors, then delete its jobs or use --force`, {
      details: { namespace: name, jobs: jobs.length, onlineExecutors: online.length },
    });
  }
  await zk.deleteRecursive(paths.namespace(name));
  // Its jobs' config history goes with it: a namespace created again under the name starts clean.
  await zk.deleteRecursive(paths.namespaceHistory(name));
}

/**
 * Replaces a namespace's settings with a compare-and-set from `version` (the version they were
 * read at): `conflict` when someone changed them since, `not-found` when the namespace is gone.
 * Resolves the settings before and after.
 */
export async function updateNamespace(zk: ZkClient, name: string, settings: Record<string, unknown>, version: number): Promise<{ before: NamespaceInfo; after: NamespaceInfo; version: number }> {
  assertNamespaceName(name);
  const path = paths.namespace(name);
  const current = await readJson(zk, path, checkNamespaceInfo).catch((error: unknown) => {
    if (hasErrorCode(error, 'bad-data')) return undefined; // a broken node may be overwritten
    throw error;
  });
  const exists = current ?? (await zk.exists(path));
  if (!exists) throw new OrreryError('not-found', `namespace '${name}' does not exist`, { details: { namespace: name } });
  // createdAt is the namespace's own: kept whatever the caller sends.
  const after = parseNamespaceInfo({ ...settings, createdAt: current?.value.createdAt ?? 0 });
  try {
    const stat = await zk.set(path, encodeJson(after), version);
    return { before: current?.value ?? parseNamespaceInfo({}), after, version: stat.version };
  } catch (error) {
    if (hasErrorCode(error, 'bad-version')) throw await staleNamespaceError(zk, name, version);
    if (hasErrorCode(error, 'no-node')) throw new OrreryError('not-found', `namespace '${name}' does not exist`, { details: { namespace: name } });
    throw error;
  }
}

/**
 * The `conflict` of a compare-and-set on a namespace's settings that failed with `bad-version`:
 * the settings as they are now, read again — the read before the set may itself be older than the
 * write that won (`current: null` with the `problem` when the node holds invalid data).
 * `not-found` when the namespace is gone meanwhile.
 */
async function staleNamespaceError(zk: ZkClient, name: string, version: number): Promise<OrreryError> {
  const path = paths.namespace(name);
  const node = await zk.get(path).catch((error: unknown) => {
    if (hasErrorCode(error, 'no-node')) return undefined;
    throw error;
  });
  if (!node) return new OrreryError('not-found', `namespace '${name}' does not exist`, { details: { namespace: name } });
  // A namespace node holding nothing has default settings (as listNamespaces reads it).
  const checked = inspectNode(node.data ?? Buffer.from('{}'), path, checkNamespaceInfo);
  return new OrreryError('conflict', `namespace '${name}' was changed by someone else since version ${version} (it is at version ${node.stat.version}); reload and try again`, {
    details: { namespace: name, version: node.stat.version, current: checked.ok ? checked.value : null, ...(checked.ok ? {} : { problem: checked.problem }) },
  });
}
