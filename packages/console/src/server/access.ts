/**
 * Who may do what in the console: the roles, what a route demands, and the one pure rule that
 * decides. Every API route declares its {@link Access} next to its definition (`config.access`);
 * the app refuses to start with a route that declares none (see app.ts).
 *
 * Roles: `admin` (everything, every namespace), and per namespace `owner` (everything in it:
 * jobs, executors, its settings), `operator` (enable, disable, run, stop, drain), `viewer` (read).
 * Each role includes the ones below it.
 */
import { NAMESPACE_ROLES, type NamespaceRole } from '../store/roles.js';

export { NAMESPACE_ROLES, type NamespaceRole };

/** The authenticated caller of a request. */
export interface Principal {
  /** The user's name. */
  user: string;
  /** An admin may do everything. */
  admin: boolean;
  /** The user's role in each namespace (absent: none). */
  roles: Readonly<Record<string, NamespaceRole>>;
  /** How the request authenticated: the UI's session cookie, or an API token. */
  via: 'session' | 'token';
  /** The API token's id, when `via` is `token`. */
  tokenId?: string;
}

/** What a route demands of its caller. */
export type Access =
  /** Anyone, even unauthenticated (login, health). */
  | { level: 'public' }
  /** Any authenticated user (their own tokens, cron preview, the namespace list — filtered by role). */
  | { level: 'user' }
  /** Admins only (users, roles, creating namespaces). */
  | { level: 'admin' }
  /** This role or a stronger one in the namespace the route names (its `:namespace` parameter). */
  | { level: NamespaceRole };

/** The verdict on one request: go on, 401, or 403. */
export type AccessVerdict = 'allowed' | 'unauthenticated' | 'forbidden';

const rank = (role: NamespaceRole | undefined): number => (role === undefined ? -1 : NAMESPACE_ROLES.indexOf(role));

/** True when `principal` holds `role` (or a stronger one) in `namespace`. */
export function hasRole(principal: Principal, namespace: string, role: NamespaceRole): boolean {
  if (principal.admin) return true;
  return rank(principal.roles[namespace]) >= rank(role);
}

/**
 * Decides one request (pure): `principal` is undefined when no valid credentials came with it;
 * `namespace` is the one the route names, if it names one.
 */
export function decideAccess(access: Access, principal: Principal | undefined, namespace: string | undefined): AccessVerdict {
  if (access.level === 'public') return 'allowed';
  if (!principal) return 'unauthenticated';
  if (access.level === 'user') return 'allowed';
  if (access.level === 'admin') return principal.admin ? 'allowed' : 'forbidden';
  if (namespace === undefined) return principal.admin ? 'allowed' : 'forbidden';
  return hasRole(principal, namespace, access.level) ? 'allowed' : 'forbidden';
}
