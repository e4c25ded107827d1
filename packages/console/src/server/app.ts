/**
 * The console's Fastify app: the REST API under `/api/v1` (OpenAPI 3 at `/api/v1/openapi.json`,
 * interactive docs at `/docs`), `/healthz` and `/metrics`, built on core's hardened HTTP endpoint
 * (one error handler, bounded input, JSON answers to malformed requests) with errors wrapped as
 * `{error: {code, message, details}}`.
 *
 * What it guarantees:
 * - **Every API route declares who may call it** (`config.access`, see access.ts) next to its
 *   definition; a route without a declaration makes the app refuse to start. The caller is
 *   authenticated and authorised on the server before the handler runs: 401 without valid
 *   credentials, 403 without the role — for every route, whatever the UI shows.
 * - Security headers (helmet), cookies (the UI's session), and a per-route rate limit (login).
 * - **Bounded event streams** (the live events and the log streams together): at most
 *   {@link STREAMS_PER_USER_MAX} per user and {@link STREAMS_MAX} in all on one console (more: 429
 *   `too-many-requests`), and each stream re-checks its caller while it is open
 *   ({@link StreamSlot.allowed}): a revoked token, a deleted user, a removed role or a moved session
 *   epoch ends it.
 *
 * Not here: TLS (put a proxy in front), and any state of its own — everything lives in ZooKeeper.
 */
import cookie from '@fastify/cookie';
import helmet from 'helmet';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyRequest } from 'fastify';
import { OrreryError, ORRERY_VERSION, createHttpApp, toError, type HttpApp, type TrustProxy } from '@orrery/core';
import { decideAccess, type Access, type Principal } from './access.js';
import type { ConsoleContext } from './context.js';
import { defaultUiDir, serveUi } from './ui.js';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** How long a write's answer waits at most for the cache to catch up, in ms. */
export const CACHE_CATCH_UP_MS = 2000;

/**
 * Resolves when the cache has no read in flight but the shard nodes' deferred re-reads (the console
 * writes none), or after `timeoutMs` (a busy tree may never be still).
 */
async function cacheCaughtUp(cache: ConsoleContext['cache'], timeoutMs = CACHE_CATCH_UP_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([cache.caughtUp(), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route (required on every `/api/v1` route). */
    access?: Access;
    /**
     * False for a POST that writes nothing the cache mirrors (sign-in, sign-out, a preview): its
     * answer does not wait for the cache to catch up (see the `onSend` hook).
     */
    readsOwnWrites?: boolean;
  }
  interface FastifyRequest {
    /** The authenticated caller (set before the handler of every API route that is not public). */
    principal?: Principal;
  }
  interface FastifyInstance {
    /** The console's open event streams (see {@link StreamRegistry}). */
    streams: StreamRegistry;
  }
}

/** A plugin adding one resource's routes to the API scope (prefix `/api/v1`). */
export type ConsoleRoutes = (app: HttpApp, ctx: ConsoleContext) => Promise<void>;

/** The API's path prefix. */
export const API_PREFIX = '/api/v1';

/** Event streams (live events and log streams together) one user may hold open on one console. */
export const STREAMS_PER_USER_MAX = 8;
/** Event streams one console holds open in all. */
export const STREAMS_MAX = 200;
/**
 * Connections one console serves at once (core's default, 256, is the executor's and the
 * allocator's): every open stream holds one, and ordinary requests need room beside them.
 */
export const CONSOLE_MAX_CONNECTIONS = 1024;

/** The caps on open event streams. */
export interface StreamLimits {
  /** Per user. Default {@link STREAMS_PER_USER_MAX}. */
  perUser: number;
  /** In all. Default {@link STREAMS_MAX}. */
  total: number;
}

/** Whether one more stream may open (pure): `open` counts the streams open now, in all and the caller's. */
export function admitStream(open: { total: number; user: number }, limits: StreamLimits): 'admitted' | 'user-limit' | 'total-limit' {
  if (open.user >= limits.perUser) return 'user-limit';
  if (open.total >= limits.total) return 'total-limit';
  return 'admitted';
}

/** An open stream's slot. */
export interface StreamSlot {
  /**
   * Authenticates the request again and re-checks the route's access (the cache only: cheap):
   * false once its caller may no longer read it (or the slot was released).
   */
  allowed(): Promise<boolean>;
  /** Frees the slot; idempotent. */
  release(): void;
}

/** The console's open event streams. */
export interface StreamRegistry {
  /**
   * Takes a slot for the caller of `request` (an authenticated API request), or throws
   * `too-many-requests` (429) when the caller or the console holds as many streams as allowed.
   */
  open(request: FastifyRequest): StreamSlot;
  /** Streams open now. */
  readonly size: number;
}

/** The last event of a stream whose caller lost access (the stream ends after it). */
export const ACCESS_REVOKED_EVENT = {
  event: 'closed',
  data: { reason: 'access-revoked', message: 'access to this stream ended (signed out everywhere, password changed, token revoked or expired, user deleted or role removed): sign in again' },
} as const;

/** The registry of one console app; `recheck` decides whether a request may still read. */
function createStreamRegistry(limits: StreamLimits, recheck: (request: FastifyRequest) => Promise<boolean>): StreamRegistry {
  const perUser = new Map<string, number>();
  let total = 0;
  return {
    open(request) {
      const user = request.principal?.user ?? '';
      const verdict = admitStream({ total, user: perUser.get(user) ?? 0 }, limits);
      if (verdict === 'user-limit') {
        throw new OrreryError('too-many-requests', `${user} already has ${limits.perUser} event streams open on this console (the most one user may): close one (another tab or window) first`, { details: { limit: limits.perUser, scope: 'user' } });
      }
      if (verdict === 'total-limit') {
        throw new OrreryError('too-many-requests', `this console already serves ${limits.total} event streams (the most it serves at once): try again later or use another console`, { details: { limit: limits.total, scope: 'console' } });
      }
      total += 1;
      perUser.set(user, (perUser.get(user) ?? 0) + 1);
      let released = false;
      return {
        async allowed() {
          return !released && (await recheck(request));
        },
        release() {
          if (released) return;
          released = true;
          total -= 1;
          const left = (perUser.get(user) ?? 1) - 1;
          if (left > 0) perUser.set(user, left);
          else perUser.delete(user);
        },
      };
    },
    get size() {
      return total;
    },
  };
}

/** Options of {@link createConsoleApp}. */
export interface ConsoleAppOptions {
  /** The resource plugins (default: every one in routes/index.ts). */
  routes: readonly ConsoleRoutes[];
  /** The health answer (default: ZooKeeper connected and the cache loaded). */
  health?: () => { ok: boolean } & Record<string, unknown>;
  /**
   * The proxies in front trusted with X-Forwarded-For/-Proto (`--trust-proxy`: a hop count or their
   * addresses), so that the audit's address and the login limit's key are the client's. Default false.
   */
  trustProxy?: TrustProxy;
  /** Caps on open event streams (tests lower them). */
  streamLimits?: Partial<StreamLimits>;
  /** Connections served at once. Default {@link CONSOLE_MAX_CONNECTIONS}. */
  maxConnections?: number;
  /** The web console's bundle, served at `/` (ui.ts). Default: `packages/console-ui/dist`. */
  uiDir?: string;
}

/** The caller's namespace, when the route names one (`:namespace`). */
function routeNamespace(params: unknown): string | undefined {
  const value = typeof params === 'object' && params !== null ? (params as { namespace?: unknown }).namespace : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** Builds the console app (not listening: `app.inject()` tests it; `listen()` serves it). */
export function createConsoleApp(ctx: ConsoleContext, options: ConsoleAppOptions): HttpApp {
  const health = options.health ?? (() => ({ ok: ctx.zk.phase === 'connected' && ctx.cache.initialized, zookeeper: ctx.zk.phase, cache: ctx.cache.initialized ? 'loaded' : 'loading', version: ORRERY_VERSION }));
  const streams = createStreamRegistry(
    { perUser: options.streamLimits?.perUser ?? STREAMS_PER_USER_MAX, total: options.streamLimits?.total ?? STREAMS_MAX },
    async (request) => {
      const access = request.routeOptions.config.access;
      if (!access) return true;
      // Fail closed: a caller that cannot be judged may not keep reading.
      const principal = await ctx.auth.authenticate(request).catch(() => undefined);
      return decideAccess(access, principal, routeNamespace(request.params)) === 'allowed';
    },
  );
  const app = createHttpApp({
    metrics: ctx.metrics,
    health,
    logger: ctx.logger,
    wrapErrors: true,
    trustProxy: options.trustProxy ?? false,
    maxConnections: options.maxConnections ?? CONSOLE_MAX_CONNECTIONS,
    routes: async (app) => {
      // helmet's middleware, built once: @fastify/helmet builds it anew for every request (parsing the
      // CSP each time), which cost about 5 % of the CPU of a busy job list.
      const securityHeaders = helmet({
        // The UI and the API docs load their own scripts and styles only.
        // No upgrade-insecure-requests (helmet's default): over plain http (TLS ends at a proxy, or
        // none on a LAN) it would send the UI's own scripts to https and leave a blank page.
        contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], scriptSrc: ["'self'"], styleSrc: ["'self'", "'unsafe-inline'"], imgSrc: ["'self'", 'data:'], upgradeInsecureRequests: null } },
      });
      app.addHook('onRequest', (request, reply, done) => {
        securityHeaders(request.raw, reply.raw, (error?: unknown) => done(error === undefined ? undefined : toError(error)));
      });
      await app.register(cookie);
      await app.register(rateLimit, {
        global: false,
        errorResponseBuilder: (_request, context) => new OrreryError('too-many-requests', `too many attempts; try again in ${Math.ceil(context.ttl / 1000)} s`, { details: { retryAfterSeconds: Math.ceil(context.ttl / 1000) } }),
      });
      await app.register(swagger, {
        openapi: {
          openapi: '3.0.3',
          info: { title: 'Orrery console API', version: ORRERY_VERSION, description: 'Namespaces, jobs, shards, runs, executors and assignments of an Orrery cluster. Errors are `{error: {code, message, details}}`; `docs/errors.md` lists every code and its HTTP status.' },
          components: {
            securitySchemes: {
              session: { type: 'apiKey', in: 'cookie', name: 'orrery_session' },
              token: { type: 'http', scheme: 'bearer' },
            },
          },
          security: [{ session: [] }, { token: [] }],
        },
      });
      await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
      app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true }, config: { access: { level: 'public' } } }, async () => app.swagger());

      // Every API route declares its access; the app refuses to start otherwise.
      app.addHook('onRoute', (route) => {
        if (!route.url.startsWith(API_PREFIX)) return;
        const access = (route.config as { access?: Access } | undefined)?.access;
        if (!access) throw new OrreryError('internal', `route ${String(route.method)} ${route.url} declares no access (config.access)`);
      });
      // Before the body is read or validated: an unauthorised caller learns nothing from a 400.
      app.addHook('onRequest', async (request) => {
        const access = request.routeOptions.config.access;
        if (!access) return; // not an API route (docs, health)
        const principal = await ctx.auth.authenticate(request);
        if (principal) request.principal = principal;
        const verdict = decideAccess(access, principal, routeNamespace(request.params));
        if (verdict === 'unauthenticated') throw new OrreryError('no-auth', 'sign in first: a session cookie (POST /api/v1/auth/login) or an API token (Authorization: Bearer …) is required');
        if (verdict === 'forbidden') {
          const namespace = routeNamespace(request.params);
          const need = access.level === 'admin' ? 'admin' : `${access.level}${namespace ? ` of namespace '${namespace}'` : ''}`;
          throw new OrreryError('forbidden', `${principal!.user} may not do this: it needs the role ${need}`, { details: { need: access.level, ...(namespace ? { namespace } : {}) } });
        }
      });
      // Read your writes: a write's answer waits (a bounded time) until the cache has read what the
      // watches announced. ZooKeeper delivers a watch event before the answer to the write that
      // caused it, so by now the cache's read of the change is in flight; a GET sent after this
      // answer then finds what was written, through this console.
      app.addHook('onSend', async (request, reply, payload) => {
        const config = request.routeOptions.config;
        const dryRun = (request.query as { dryRun?: unknown } | undefined)?.dryRun === true;
        if (config.access && config.readsOwnWrites !== false && !dryRun && WRITE_METHODS.has(request.method) && reply.statusCode < 400) await cacheCaughtUp(ctx.cache);
        return payload;
      });
      await app.register(async (api) => {
        for (const routes of options.routes) await routes(api, ctx);
      }, { prefix: API_PREFIX });
      await serveUi(app, options.uiDir ?? defaultUiDir());
    },
  });
  // On the root, before the plugins load: every scope (and a test) sees it.
  app.decorate('streams', streams);
  return app;
}
