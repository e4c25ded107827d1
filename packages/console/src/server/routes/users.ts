/**
 * `/api/v1/users` (admins): list, create, get, update (roles, admin, password — a new password ends
 * the user's sessions), delete (never the last admin; the user's tokens go too). Reads come from
 * the cache; writes are versioned compare-and-set and audited, never with a password or its hash.
 */
import { Type } from '@sinclair/typebox';
import { NODE_NAME_PATTERN, OrreryError, USER_NAME_PATTERN, toError } from '@orrery/core';
import type { ConsoleRoutes } from '../app.js';
import { accountsOf } from '../accounts.js';
import { deleteUserTokens } from '../../store/tokens.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, USER_ROLES_MAX, createUser, deleteUser, updateUser, userView, type NewUser, type UserChange } from '../../store/users.js';

/** A user name in a path or a body. */
export const UserNameSchema = Type.String({ pattern: USER_NAME_PATTERN.source, description: "letters, digits, '.', '_' and '-', 1 to 64; not '.', '..' or __proto__" });
const RoleSchema = Type.Union([Type.Literal('viewer'), Type.Literal('operator'), Type.Literal('owner')]);
const RolesSchema = Type.Record(Type.String({ pattern: NODE_NAME_PATTERN.source }), RoleSchema, { maxProperties: USER_ROLES_MAX, description: 'namespace → role (viewer ⊂ operator ⊂ owner)' });
const PasswordSchema = Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH, description: `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters` });
const UserParams = Type.Object({ user: UserNameSchema }, { additionalProperties: false });

/** A user as the API shows it (never a password or its hash). */
/** The body of `POST /users`. */
export const NewUserBodySchema = Type.Object({ name: UserNameSchema, password: PasswordSchema, admin: Type.Optional(Type.Boolean()), roles: Type.Optional(RolesSchema) }, { additionalProperties: false });
/** The body of `PUT /users/:user` (compare-and-set on `version`). */
export const UserChangeBodySchema = Type.Object({ version: Type.Integer({ minimum: 0 }), admin: Type.Optional(Type.Boolean()), roles: Type.Optional(RolesSchema), password: Type.Optional(PasswordSchema) }, { additionalProperties: false });
export const UserSchema = Type.Object({
  name: Type.String(),
  admin: Type.Boolean(),
  roles: Type.Record(Type.String(), RoleSchema),
  createdAt: Type.Integer(),
  updatedAt: Type.Optional(Type.Integer()),
  version: Type.Integer({ description: 'the node version, for a compare-and-set update' }),
});

function notFound(name: string): OrreryError {
  return new OrreryError('not-found', `user '${name}' does not exist`, { details: { user: name } });
}

export const userRoutes: ConsoleRoutes = async (app, ctx) => {
  const accounts = accountsOf(ctx.cache);

  app.get('/users', {
    schema: { tags: ['users'], summary: 'Every user (admin)', response: { 200: Type.Object({ users: Type.Array(UserSchema) }) } },
    config: { access: { level: 'admin' } },
  }, async () => ({ users: accounts.users().map((u) => userView(u.name, u.record, u.version)) }));

  app.post('/users', {
    schema: {
      tags: ['users'],
      summary: 'Create a user (admin)',
      body: NewUserBodySchema,
      response: { 201: UserSchema },
    },
    config: { access: { level: 'admin' } },
  }, async (request, reply) => {
    const body = request.body as NewUser;
    const created = await createUser(ctx.zk, body, ctx.now());
    await ctx.audit.record(request, { action: 'user.create', target: created.name, after: created });
    void reply.code(201);
    return created;
  });

  app.get('/users/:user', {
    schema: { tags: ['users'], summary: 'One user (admin)', params: UserParams, response: { 200: UserSchema } },
    config: { access: { level: 'admin' } },
  }, async (request) => {
    const { user } = request.params as { user: string };
    const found = accounts.user(user);
    if (!found) throw notFound(user);
    return userView(user, found.record, found.version);
  });

  app.put('/users/:user', {
    schema: {
      tags: ['users'],
      summary: "Change a user's admin flag, roles or password (admin; compare-and-set: send the version you read). A new password ends the user's sessions",
      params: UserParams,
      body: UserChangeBodySchema,
      response: { 200: UserSchema },
    },
    config: { access: { level: 'admin' } },
  }, async (request) => {
    const { user } = request.params as { user: string };
    const { version, ...change } = request.body as UserChange & { version: number };
    const result = await updateUser(ctx.zk, user, change, version, ctx.now());
    await ctx.audit.record(request, {
      action: 'user.update',
      target: user,
      before: result.before,
      after: result.after,
      ...(result.passwordChanged ? { details: { passwordChanged: true, sessionsEnded: true } } : {}),
    });
    return result.after;
  });

  app.delete('/users/:user', {
    schema: {
      tags: ['users'],
      summary: 'Delete a user and their API tokens (admin); never the last admin',
      params: UserParams,
      querystring: Type.Object({ version: Type.Optional(Type.Integer({ minimum: 0, description: 'compare-and-set: the version you read' })) }, { additionalProperties: false }),
      response: { 204: Type.Null() },
    },
    config: { access: { level: 'admin' } },
  }, async (request, reply) => {
    const { user } = request.params as { user: string };
    const { version } = request.query as { version?: number };
    const before = await deleteUser(ctx.zk, user, version);
    // The user is gone (and their tokens already refused: a token names its owner's createdAt).
    // The entry is written whatever the token cleanup does, and says whether it finished.
    let cleanup: { tokensRevoked: string[] } | { error: Error };
    try {
      cleanup = { tokensRevoked: await deleteUserTokens(ctx.zk, user) };
    } catch (error) {
      cleanup = { error: toError(error) };
    }
    const details = 'error' in cleanup
      ? { tokenCleanup: 'failed', tokenCleanupError: cleanup.error.message }
      : { tokenCleanup: 'finished', tokensRevoked: cleanup.tokensRevoked };
    await ctx.audit.record(request, { action: 'user.delete', target: user, before, details });
    if ('error' in cleanup) {
      ctx.logger.warn({ err: cleanup.error, user }, 'user deleted, but not all their tokens');
      throw cleanup.error;
    }
    void reply.code(204);
  });
};
