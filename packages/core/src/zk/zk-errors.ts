/**
 * The one place that turns the native ZooKeeper client's numeric result codes into
 * {@link OrreryError}s with string codes.
 */
import { OrreryError, type ErrorCode } from '../errors.js';

/** ZooKeeper's C client result codes (zookeeper.h) that Orrery names. */
const RESULT_CODES: Record<number, { code: ErrorCode; text: string }> = {
  [-1]: { code: 'zookeeper-error', text: 'system error' },
  [-2]: { code: 'zookeeper-error', text: 'runtime inconsistency' },
  [-3]: { code: 'zookeeper-error', text: 'data inconsistency' },
  [-4]: { code: 'connection-loss', text: 'connection loss' },
  [-5]: { code: 'zookeeper-error', text: 'marshalling error' },
  [-6]: { code: 'zookeeper-error', text: 'operation unimplemented' },
  [-7]: { code: 'operation-timeout', text: 'operation timeout' },
  [-8]: { code: 'bad-arguments', text: 'bad arguments' },
  [-9]: { code: 'not-connected', text: 'invalid state (the handle is not connected)' },
  [-101]: { code: 'no-node', text: 'no node' },
  [-102]: { code: 'no-auth', text: "not authorised by the node's ACL (a tree secured with ZooKeeper digest credentials needs the same ORRERY_ZK_AUTH)" },
  [-103]: { code: 'bad-version', text: 'bad version' },
  [-108]: { code: 'no-children-for-ephemerals', text: 'ephemeral nodes may not have children' },
  [-110]: { code: 'node-exists', text: 'node exists' },
  [-111]: { code: 'not-empty', text: 'node has children' },
  [-112]: { code: 'session-expired', text: 'session expired' },
  [-114]: { code: 'bad-arguments', text: 'invalid ACL' },
  [-115]: { code: 'auth-failed', text: 'authentication failed' },
  [-116]: { code: 'closing', text: 'the handle is closing' },
  [-118]: { code: 'session-moved', text: 'session moved to another server' },
};

/** Builds the error for native result code `rc` of `operation` on `path`. */
export function zkError(rc: number, operation: string, path: string): OrreryError {
  const known = RESULT_CODES[rc] ?? { code: 'zookeeper-error' as const, text: `error ${rc}` };
  return new OrreryError(known.code, `ZooKeeper ${operation} ${path}: ${known.text}`, {
    details: { operation, path, rc },
  });
}
