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
 *
 * Not here: TLS (put a proxy in front), and any state of its own — everything lives in ZooKeeper.
 */
import cookie from '@fastify/cookie';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { OrreryError, ORRERY_VERSION, createHttpApp, type HttpApp, type TrustProxy } from '@orrery/core';
import { decideAccess, type Access, type Principal } from './access.js';
import type { ConsoleContext } from './context.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route (required on every `/api/v1` route). */
    access?: Access;
  }
  interface FastifyRequest {
    /** The authenticated caller (set before the handler of every API route that is not public). */
    principal?: Principal;
  }
}

/** A plugin adding one resource's routes to the API scope (prefix `/api/v1`). */
export type ConsoleRoutes = (app: HttpApp, ctx: ConsoleContext) => Promise<void>;

/** The API's path prefix. */
export const API_PREFIX = '/api/v1';

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
}

/** The caller's namespace, when the route names one (`:namespace`). */
function routeNamespace(params: unknown): string | undefined {
  const value = typeof params === 'object' && params !== null ? (params as { namespace?: unknown }).namespace : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** Builds the console app (not listening: `app.inject()` tests it; `listen()` serves it). */
export function createConsoleApp(ctx: ConsoleContext, options: ConsoleAppOptions): HttpApp {
  const health = options.health ?? (() => ({ ok: ctx.zk.phase === 'connected' && ctx.cache.initialized, zookeeper: ctx.zk.phase, cache: ctx.cache.initialized ? 'loaded' : 'loading', version: ORRERY_VERSION }));
  return createHttpApp({
    metrics: ctx.metrics,
    health,
    logger: ctx.logger,
    wrapErrors: true,
    trustProxy: options.trustProxy ?? false,
    routes: async (app) => {
      await app.register(helmet, {
        // The UI and the API docs load their own scripts and styles only.
        contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], scriptSrc: ["'self'"], styleSrc: ["'self'", "'unsafe-inline'"], imgSrc: ["'self'", 'data:'] } },
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
      await app.register(async (api) => {
        for (const routes of options.routes) await routes(api, ctx);
      }, { prefix: API_PREFIX });
    },
  });
}
