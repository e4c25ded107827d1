/**
 * Removing an executor the namespace no longer needs to know: its node, its drain flag (meta) and
 * the allocator's summary — only while it is offline.
 *
 * What it guarantees: an online executor (one with a presence node) is never removed: the check
 * comes first, and the executor node's delete fails while a presence exists, so an executor that
 * comes back during the removal stops it with `conflict` and keeps its node.
 * Not guaranteed: in that race the children already deleted (the summary, then the meta) stay
 * deleted — the allocator writes the summary again; a drain flag must be set again.
 */
import { OrreryError, hasErrorCode, paths, type ZkClient } from '@orrery/core';
import { assertNamespaceExists } from './namespaces.js';

/** Children of an executor node removed with it, in this order (the presence is never one). */
const REMOVED_CHILDREN = ['assignment', 'meta'] as const;
/** Each removed child's path, from the one layout module. */
const CHILD_PATH: Record<(typeof REMOVED_CHILDREN)[number], (namespace: string, executor: string) => string> = {
  assignment: paths.executorAssignment,
  meta: paths.executorMeta,
};

function online(namespace: string, executor: string): OrreryError {
  return new OrreryError('conflict', `executor '${executor}' is online: only an offline executor can be removed (stop it first, or drain it)`, { details: { namespace, executor, online: true } });
}

/** Removes an offline executor's nodes; `not-found` when unknown, `conflict` when online. */
export async function removeOfflineExecutor(zk: ZkClient, namespace: string, executor: string): Promise<void> {
  await assertNamespaceExists(zk, namespace);
  if (!(await zk.exists(paths.executor(namespace, executor)))) {
    throw new OrreryError('not-found', `executor '${executor}' is not known in namespace '${namespace}'`, { details: { namespace, executor } });
  }
  if (await zk.exists(paths.executorPresence(namespace, executor))) throw online(namespace, executor);
  const children = await zk.getChildren(paths.executor(namespace, executor)).catch((error: unknown): string[] => {
    if (hasErrorCode(error, 'no-node')) return [];
    throw error;
  });
  if (children.includes('presence')) throw online(namespace, executor);
  for (const child of REMOVED_CHILDREN) {
    if (!children.includes(child)) continue;
    await zk.delete(CHILD_PATH[child](namespace, executor)).catch((error: unknown) => {
      if (!hasErrorCode(error, 'no-node')) throw error;
    });
  }
  try {
    await zk.delete(paths.executor(namespace, executor));
  } catch (error) {
    if (hasErrorCode(error, 'no-node')) return; // removed meanwhile by someone else
    if (hasErrorCode(error, 'not-empty')) {
      if (await zk.exists(paths.executorPresence(namespace, executor))) throw online(namespace, executor);
      const left = await zk.getChildren(paths.executor(namespace, executor)).catch(() => [] as string[]); // only for the message
      throw new OrreryError('conflict', `executor '${executor}' could not be removed: its node holds ${left.map((c) => `'${c}'`).join(', ') || 'children'} that Orrery did not write`, { details: { namespace, executor, children: left } });
    }
    throw error;
  }
}
