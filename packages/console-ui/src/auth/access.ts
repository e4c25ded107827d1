/**
 * What the signed-in user may do — the server's role rule (packages/console/src/server/access.ts)
 * mirrored, so the UI shows only the buttons the server will accept. The server still decides.
 */
import { NAMESPACE_ROLES, type NamespaceRole, type Principal } from '../api/types';

/** What the UI offers, and the role each needs (as the API routes declare it). */
export const ACTION_ROLES = {
  /** Read a namespace: jobs, shards, runs, executors, stats. */
  read: 'viewer',
  /** Enable, disable, run now, stop, drain, undrain. */
  operate: 'operator',
  /** Create, edit, copy, delete jobs; import; remove executors; namespace settings; its audit. */
  own: 'owner',
  /** Users, namespaces (create, delete), every audit entry. */
  administer: 'admin',
} as const satisfies Record<string, NamespaceRole | 'admin'>;

export type Action = keyof typeof ACTION_ROLES;

const rank = (role: NamespaceRole | undefined): number => (role === undefined ? -1 : NAMESPACE_ROLES.indexOf(role));

/** Whether `principal` may do `action` in `namespace` (pure; admins may do everything). */
export function can(principal: Principal | undefined, action: Action, namespace?: string): boolean {
  if (!principal) return false;
  if (principal.admin) return true;
  const need = ACTION_ROLES[action];
  if (need === 'admin') return false;
  if (namespace === undefined) return false;
  return rank(principal.roles[namespace]) >= rank(need);
}

/** The user's role in `namespace` to show ('admin' for an admin). */
export function roleIn(principal: Principal, namespace: string): NamespaceRole | 'admin' | undefined {
  return principal.admin ? 'admin' : principal.roles[namespace];
}
