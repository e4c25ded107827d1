/**
 * `GET /api/v1/audit`: the audit log, newest first, filtered and paged (`before` is the `next` of
 * the previous page). Admins see every entry; a namespace owner sees their namespaces' entries.
 * Read from the cache.
 */
import { Type } from '@sinclair/typebox';
import { JOB_NAME_PATTERN, NODE_NAME_PATTERN, OrreryError, USER_NAME_PATTERN } from '@orrery/core';
import { NAMESPACE_ROLES, hasRole } from '../access.js';
import type { ConsoleRoutes } from '../app.js';
import { accountsOf } from '../accounts.js';
import { selectAudit } from '../../store/audit.js';

/** Entries in a page unless `limit` says otherwise. */
export const AUDIT_PAGE_DEFAULT = 100;
/** Most entries in a page. */
export const AUDIT_PAGE_MAX = 1000;

/** One audit entry as listed. */
export const AuditEntrySchema = Type.Object({
  id: Type.Integer({ description: 'the entry sequence: pass it as `before` for older ones' }),
  at: Type.Integer({ description: 'epoch ms' }),
  user: Type.Union([Type.String(), Type.Null()], { description: 'null: not signed in (a failed login)' }),
  via: Type.Union([Type.Literal('session'), Type.Literal('token'), Type.Null()]),
  tokenId: Type.Optional(Type.String()),
  ip: Type.String(),
  action: Type.String(),
  namespace: Type.Optional(Type.String()),
  job: Type.Optional(Type.String()),
  target: Type.Optional(Type.String()),
  before: Type.Optional(Type.Unknown()),
  after: Type.Optional(Type.Unknown()),
  details: Type.Optional(Type.Unknown()),
});
/** A page of `GET /audit`. */
export const AuditListSchema = Type.Object({ entries: Type.Array(AuditEntrySchema), next: Type.Optional(Type.Integer({ description: 'the id to pass as before for the next page' })) });


export const auditRoutes: ConsoleRoutes = async (app, ctx) => {
  const accounts = accountsOf(ctx.cache);
  app.get('/audit', {
    schema: {
      tags: ['audit'],
      summary: "Audit entries, newest first (admin: all; a namespace owner: their namespaces')",
      querystring: Type.Object({
        namespace: Type.Optional(Type.String({ pattern: NODE_NAME_PATTERN.source })),
        job: Type.Optional(Type.String({ pattern: JOB_NAME_PATTERN.source })),
        user: Type.Optional(Type.String({ pattern: USER_NAME_PATTERN.source })),
        action: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        limit: Type.Integer({ minimum: 1, maximum: AUDIT_PAGE_MAX, default: AUDIT_PAGE_DEFAULT }),
        before: Type.Optional(Type.Integer({ minimum: 0, description: 'only entries older than this id (the previous page\'s next)' })),
      }, { additionalProperties: false }),
      response: { 200: AuditListSchema },
    },
    config: { access: { level: 'user' } },
  }, async (request) => {
    const principal = request.principal!;
    const query = request.query as { namespace?: string; job?: string; user?: string; action?: string; limit: number; before?: number };
    const owns = (ns: string): boolean => hasRole(principal, ns, 'owner');
    if (!principal.admin) {
      const owned = Object.entries(principal.roles).some(([, role]) => role === NAMESPACE_ROLES[2]);
      if (query.namespace !== undefined ? !owns(query.namespace) : !owned) {
        const where = query.namespace !== undefined ? ` of namespace '${query.namespace}'` : ' of some namespace';
        throw new OrreryError('forbidden', `${principal.user} may not read the audit log: it needs the role owner${where} (or admin)`, {
          details: { need: 'owner', ...(query.namespace !== undefined ? { namespace: query.namespace } : {}) },
        });
      }
    }
    return selectAudit(accounts.auditEntries(), {
      ...query,
      visible: (e) => principal.admin || (e.namespace !== undefined && owns(e.namespace)),
    });
  });
};
