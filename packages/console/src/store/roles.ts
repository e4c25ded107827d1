/**
 * The roles a console user can hold in one namespace, weakest first: `viewer` (read), `operator`
 * (enable, disable, run, stop, drain), `owner` (everything in it). Each includes the ones before
 * it. Stored in user records (store/users.ts) and judged by the server's access rule
 * (server/access.ts); it lives here so that the store does not depend on the server.
 */

/** Roles a user can hold in one namespace, weakest first. */
export const NAMESPACE_ROLES = ['viewer', 'operator', 'owner'] as const;
/** A role in one namespace. */
export type NamespaceRole = (typeof NAMESPACE_ROLES)[number];
