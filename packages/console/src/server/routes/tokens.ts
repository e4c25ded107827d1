/**
 * `/api/v1/tokens`: API tokens for automation. A user creates, lists and revokes their own; an
 * admin lists and revokes anyone's. The token itself is in the creation's answer only; it is
 * stored hashed, and never reaches a log or the audit.
 *
 * Tokens are created from a signed-in session only: a token cannot make another (an expiring or
 * stolen token would otherwise mint one that never expires). A token lives until it expires, is
 * revoked, or its owner is deleted — "log out everywhere" and a password change end sessions, not
 * tokens (as API tokens usually work: revoke them here).
 */
import { Type } from '@sinclair/typebox';
import { OrreryError, TOKEN_ID_PATTERN, USER_NAME_PATTERN } from '@orrery/core';
import type { ConsoleRoutes } from '../app.js';
import { accountsOf } from '../accounts.js';
import { TOKEN_NAME_MAX_LENGTH, TOKENS_PER_USER_MAX, createToken, deleteToken, readToken, tokenView } from '../../store/tokens.js';

/** Longest token life, in days. */
export const TOKEN_MAX_DAYS = 3650;
const DAY_MS = 86_400_000;

/** A token as listed (never its secret or hash). */
export const TokenSchema = Type.Object({
  id: Type.String(),
  user: Type.String(),
  name: Type.String(),
  createdAt: Type.Integer(),
  expiresAt: Type.Union([Type.Integer(), Type.Null()], { description: 'epoch ms; null: never' }),
});

export const tokenRoutes: ConsoleRoutes = async (app, ctx) => {
  const accounts = accountsOf(ctx.cache);

  app.post('/tokens', {
    schema: {
      tags: ['tokens'],
      summary: 'Create an API token for yourself, from a signed-in session (a token may not create tokens: 403); the answer holds the token, shown this once (send it as Authorization: Bearer …)',
      body: Type.Object({
        name: Type.String({ minLength: 1, maxLength: TOKEN_NAME_MAX_LENGTH, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description: 'a label, e.g. "ci deploy"' }),
        expiresInDays: Type.Optional(Type.Integer({ minimum: 1, maximum: TOKEN_MAX_DAYS, description: 'absent: never expires' })),
      }, { additionalProperties: false }),
      response: { 201: Type.Composite([TokenSchema, Type.Object({ token: Type.String({ description: 'the secret: shown once' }) })]) },
    },
    config: { access: { level: 'user' } },
    // Decided before the body is read, as access is (the app's hook has set the principal).
    onRequest: async (request) => {
      if (request.principal?.via === 'token') {
        throw new OrreryError('forbidden', 'an API token cannot create tokens: create tokens from a signed-in session (POST /api/v1/auth/login)', { details: { need: 'session', via: 'token' } });
      }
    },
  }, async (request, reply) => {
    const principal = request.principal!;
    const { name, expiresInDays } = request.body as { name: string; expiresInDays?: number };
    const owner = accounts.user(principal.user);
    if (!owner) throw new OrreryError('not-found', `user '${principal.user}' does not exist`);
    const held = accounts.tokens().filter((t) => t.record.user === principal.user).length;
    if (held >= TOKENS_PER_USER_MAX) {
      throw new OrreryError('conflict', `${principal.user} already holds ${held} tokens (at most ${TOKENS_PER_USER_MAX}); revoke one first`, { details: { tokens: held, max: TOKENS_PER_USER_MAX } });
    }
    const now = ctx.now();
    const { token, view } = await createToken(ctx.zk, { user: principal.user, userCreatedAt: owner.record.createdAt, name, expiresAt: expiresInDays === undefined ? null : now + expiresInDays * DAY_MS }, now);
    await ctx.audit.record(request, { action: 'token.create', target: view.id, after: view });
    void reply.code(201);
    return { ...view, token };
  });

  app.get('/tokens', {
    schema: {
      tags: ['tokens'],
      summary: "Your API tokens; an admin may name another user's (?user=) or ask for all (?all=true)",
      querystring: Type.Object({ user: Type.Optional(Type.String({ pattern: USER_NAME_PATTERN.source })), all: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      response: { 200: Type.Object({ tokens: Type.Array(TokenSchema) }) },
    },
    config: { access: { level: 'user' } },
  }, async (request) => {
    const principal = request.principal!;
    const { user, all } = request.query as { user?: string; all?: boolean };
    if (!principal.admin && (all || (user !== undefined && user !== principal.user))) {
      throw new OrreryError('forbidden', `${principal.user} may list only their own tokens: another user's need the role admin`, { details: { need: 'admin' } });
    }
    const whose = all ? undefined : (user ?? principal.user);
    return { tokens: accounts.tokens().filter((t) => whose === undefined || t.record.user === whose).map((t) => tokenView(t.id, t.record)) };
  });

  app.delete('/tokens/:id', {
    schema: {
      tags: ['tokens'],
      summary: 'Revoke a token (yours; an admin: anyone\'s). Every console refuses it once its watch sees the delete',
      params: Type.Object({ id: Type.String({ pattern: TOKEN_ID_PATTERN.source, description: '16 hex digits' }) }, { additionalProperties: false }),
      response: { 204: Type.Null() },
    },
    config: { access: { level: 'user' } },
  }, async (request, reply) => {
    const principal = request.principal!;
    const { id } = request.params as { id: string };
    // Read your own writes: a token made a moment ago (maybe through this console) may not be cached yet.
    const record = accounts.token(id) ?? (await readToken(ctx.zk, id));
    // Someone else's token is "not found" to a non-admin: ids are not a way to learn who holds what.
    if (!record || (!principal.admin && record.user !== principal.user)) {
      throw new OrreryError('not-found', `token '${id}' does not exist`, { details: { token: id } });
    }
    await deleteToken(ctx.zk, id);
    await ctx.audit.record(request, { action: 'token.revoke', target: id, before: tokenView(id, record) });
    void reply.code(204);
  });
};
