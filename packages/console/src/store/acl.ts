/**
 * Securing an existing tree: gives every node under Orrery's root (and the root itself) the ACL of
 * the caller's digest credentials — all permissions for that identity, nothing for anyone else.
 * New nodes get it when they are created (see the ZooKeeper client); this is for a tree that was
 * created before authentication was turned on.
 */
import { OrreryError, hasErrorCode, type ZkClient } from '@orrery/core';

/** What {@link secureTree} did. */
export interface SecureResult {
  /** Nodes whose ACL was set. */
  secured: number;
  /** Nodes that vanished while the tree was walked. */
  gone: number;
}

/**
 * Sets the client's ACL on every node of the tree, parents before children (so that nobody else
 * can add a child under a node once it is walked). Needs a client with digest credentials.
 */
export async function secureTree(zk: ZkClient): Promise<SecureResult> {
  if (!zk.options.auth) {
    throw new OrreryError('usage', 'securing the tree needs ZooKeeper digest credentials: set ORRERY_ZK_AUTH=user:password (or --zk-auth-file FILE), the same as every Orrery process will use');
  }
  const result: SecureResult = { secured: 0, gone: 0 };
  const walk = async (path: string): Promise<void> => {
    try {
      await zk.setAcl(path);
      result.secured += 1;
      const children = await zk.getChildren(path);
      for (const child of children) await walk(path === '/' ? `/${child}` : `${path}/${child}`);
    } catch (error) {
      if (hasErrorCode(error, 'no-node')) result.gone += 1;
      else throw error;
    }
  };
  await walk('/');
  return result;
}
