/** Users (admin): the list, create, update (admin flag, roles, password; compare-and-set), delete. */
import { queryOptions } from '@tanstack/react-query';
import type { NewUserBody, UserAnswer, UserChangeBody } from '@orrery/console/api-types';
import { api, seg } from '../../api/client';
import type { NamespaceRole } from '../../api/types';

export const usersKeys = {
  all: ['users'] as const,
  list: () => [...usersKeys.all, 'list'] as const,
};

export const usersQuery = () =>
  queryOptions({
    queryKey: usersKeys.list(),
    queryFn: ({ signal }) => api<{ users: UserAnswer[] }>('/users', { signal }),
    select: (answer) => answer.users,
  });

export type Roles = Record<string, NamespaceRole>;

/** A new user, as `POST /users` takes it (the form always sends the admin flag and the roles). */
export type NewUser = Required<NewUserBody>;

export const createUser = (user: NewUser) => api<UserAnswer>('/users', { method: 'POST', body: user });

/** A change of a user, from the `version` read (409 `conflict` with `details.current` when it moved). */
export type UserChange = UserChangeBody;

export const updateUser = (name: string, change: UserChange) => api<UserAnswer>(`/users/${seg(name)}`, { method: 'PUT', body: change });

export const deleteUser = (name: string, version: number) => api<void>(`/users/${seg(name)}`, { method: 'DELETE', query: { version } });

/** Shortest and longest password the API takes. */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;
/** A user name, as the API checks it. */
export const USER_NAME_PATTERN = '(?!\\.{1,2}$|__proto__$)[A-Za-z0-9_.\\-]{1,64}';
/** A namespace name, as the API checks it. */
export const NAMESPACE_NAME_PATTERN = /^(?!\.{1,2}$|__proto__$)[A-Za-z0-9_.-]{1,128}$/;

/** One row of the roles editor. */
export interface RoleRow {
  namespace: string;
  role: NamespaceRole;
}

/** A user's roles as editor rows, by namespace (pure). */
export const rowsOf = (roles: Readonly<Record<string, NamespaceRole>>): RoleRow[] =>
  Object.entries(roles)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([namespace, role]) => ({ namespace, role }));

/** The rows as a roles map, or the problems: a blank, malformed or repeated namespace (pure). */
export function rolesOf(rows: readonly RoleRow[]): { ok: true; roles: Roles } | { ok: false; problems: { index: number; kind: 'blank' | 'format' | 'duplicate' }[] } {
  const roles: Roles = {};
  const problems: { index: number; kind: 'blank' | 'format' | 'duplicate' }[] = [];
  const seen = new Set<string>();
  rows.forEach((row, index) => {
    const namespace = row.namespace.trim();
    if (namespace === '') problems.push({ index, kind: 'blank' });
    else if (!NAMESPACE_NAME_PATTERN.test(namespace)) problems.push({ index, kind: 'format' });
    else if (seen.has(namespace)) problems.push({ index, kind: 'duplicate' });
    else {
      seen.add(namespace);
      roles[namespace] = row.role;
    }
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, roles };
}
