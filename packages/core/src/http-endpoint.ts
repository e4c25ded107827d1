/**
 * The HTTP endpoint of Orrery's processes, a Fastify app: `/metrics` (Prometheus text), `/healthz`
 * (JSON; 503 when not ok), and the routes a process adds as a plugin (`routes`).
 *
 * What it guarantees:
 * - **No request can crash the process.** Every error a route throws, a schema rejects or the
 *   router finds (bad percent-encoding, an over-long path parameter) goes through one error
 *   handler ({@link httpErrorAnswer}) and is answered as JSON `{code, message, details?}`, the
 *   status taken from {@link HTTP_STATUS}; an unknown error is a 500 with a generic message naming
 *   the request id, and the full error goes to the log only. A request the HTTP parser cannot
 *   parse (bad request line, bad header, bad Content-Length / Transfer-Encoding, headers over
 *   16 KiB) is answered with a JSON 400 (431 for the headers, 408 for a request slower than
 *   {@link HTTP_REQUEST_TIMEOUT_MS}) and the connection is closed.
 * - **Bounded input**: bodies up to {@link HTTP_BODY_LIMIT} bytes (no route takes one), path
 *   parameters up to {@link HTTP_MAX_PARAM_LENGTH} characters, at most `maxConnections`
 *   (default {@link HTTP_MAX_CONNECTIONS}) connections at once (more are dropped at accept).
 * - **Local by default**: it binds {@link DEFAULT_HTTP_HOST} unless told otherwise.
 * - `HEAD` works wherever `GET` does. Unknown paths and methods are a JSON 404.
 *
 * What it does not: TLS, rate limiting, or authentication of its own (`/metrics` and `/healthz`
 * are open; a process's plugin authenticates its routes). Put it behind a firewall.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifySchemaValidationError,
  type FastifyBaseLogger,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ERROR_CODES, HTTP_STATUS, type ErrorCode, type ValidationIssue, validationError } from './errors.js';
import { silentLogger, type Logger } from './logger.js';
import type { Metrics } from './metrics.js';

/** The address the endpoint binds unless told otherwise: this host only. */
export const DEFAULT_HTTP_HOST = '127.0.0.1';
/** Largest request body accepted, in bytes (no route takes a body; larger ones get a 413). */
export const HTTP_BODY_LIMIT = 16 * 1024;
/** Longest path parameter accepted, in characters (longer: a 414). */
export const HTTP_MAX_PARAM_LENGTH = 128;
/** Largest request line plus headers accepted, in bytes (Node's default; more: a 431). */
export const HTTP_MAX_HEADER_BYTES = 16 * 1024;
/** A request must arrive whole within this many ms (else a 408 and the connection closes). */
export const HTTP_REQUEST_TIMEOUT_MS = 30_000;
/** Connections served at once unless a process asks for more (`maxConnections`); more are dropped at accept. */
export const HTTP_MAX_CONNECTIONS = 256;
/** Longest request target quoted back in a 404's message, in characters. */
const QUOTED_TARGET_LENGTH = 200;

/** The Fastify app of an endpoint, typed for TypeBox route schemas. */
export type HttpApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression<RawServerDefault>,
  RawReplyDefaultExpression<RawServerDefault>,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** The JSON body of every error answer. */
export interface HttpErrorBody {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/** Proxies trusted with `X-Forwarded-*`: none, a hop count, or their addresses / CIDR ranges. */
export type TrustProxy = false | number | readonly string[];

/** Options of {@link createHttpApp} and {@link startHttpEndpoint}. */
export interface HttpEndpointOptions {
  /** TCP port (0: any free port). */
  port: number;
  /** Bind address. Default {@link DEFAULT_HTTP_HOST} (`127.0.0.1`); `0.0.0.0` for every interface. */
  host?: string;
  metrics: Metrics;
  /** The health answer: `ok: false` gives 503. */
  health: () => { ok: boolean } & Record<string, unknown>;
  /**
   * A Fastify plugin adding the process's own routes, registered in a scope of its own (its hooks
   * apply to its routes only). Errors it throws are answered by the one error handler.
   */
  routes?: (app: HttpApp) => void | Promise<void>;
  /** Where 5xx answers' errors and client errors are logged. Default: silent. */
  logger?: Logger;
  /**
   * Wrap every error answer as `{error: {code, message, details?}}` (the console API's shape)
   * instead of the bare object. Default false.
   */
  wrapErrors?: boolean;
  /**
   * Which proxies in front to believe about `X-Forwarded-For` / `-Proto` / `-Host` (Fastify's
   * `trustProxy`): the number of proxy hops in front (`1`: the one proxy), or the proxies'
   * addresses and CIDR ranges. `request.ip` is then the first address, counted from the
   * connection's end, that is not a trusted proxy (not the leftmost entry, which the client
   * writes), and `request.protocol` what the trusted proxy saw. A hop count trusts whatever
   * connects as the first proxy: only safe when nothing but the proxy reaches the port (a list
   * of addresses is not). Default false: the connection's own address. There is no "trust
   * everything": a client could claim any address.
   */
  trustProxy?: TrustProxy;
  /**
   * Connections served at once; more are dropped at accept. Default {@link HTTP_MAX_CONNECTIONS}
   * (the executor's and the allocator's); the console, whose event streams each hold one, asks for more.
   */
  maxConnections?: number;
}

/** A running endpoint. */
export interface HttpEndpoint {
  readonly port: number;
  /** Stops listening and closes every connection. Idempotent. */
  close(): Promise<void>;
}

/** Fastify's own 4xx errors: which field of the request broke which rule. */
const FRAMEWORK_ISSUES: Record<string, { field: string; rule: string }> = {
  FST_ERR_BAD_URL: { field: 'url', rule: 'percent-encoding' },
  FST_ERR_MAX_PARAM_LENGTH: { field: 'url', rule: 'max-param-length' },
  FST_ERR_CTP_BODY_TOO_LARGE: { field: 'body', rule: 'max-size' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { field: 'content-type', rule: 'supported-media-type' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { field: 'content-length', rule: 'matches-body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { field: 'body', rule: 'json' },
  FST_ERR_CTP_INVALID_JSON_BODY: { field: 'body', rule: 'json' },
};

function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

function fieldOf(error: unknown, key: 'code' | 'message' | 'statusCode' | 'details'): unknown {
  return typeof error === 'object' && error !== null ? (error as Record<string, unknown>)[key] : undefined;
}

/**
 * The answer to an error (pure): Orrery's codes through {@link HTTP_STATUS}; Fastify's own 4xx
 * errors as `validation` with their status (413, 414, 415, 400) and an issue naming the field and
 * the rule; anything else a 500 whose message names only the request id. 5xx answers never carry
 * the error's message or details (they may name paths); `log` says the error belongs in the log.
 */
export function httpErrorAnswer(error: unknown, requestId: string): { status: number; body: HttpErrorBody; log: boolean } {
  const code = fieldOf(error, 'code');
  const message = fieldOf(error, 'message');
  if (isErrorCode(code)) {
    const status = HTTP_STATUS[code];
    if (status >= 500 && !CALLER_FACING_CODES.has(code)) return { status, body: serverError(code, requestId), log: true };
    const details = fieldOf(error, 'details');
    const body: HttpErrorBody = { code, message: typeof message === 'string' ? message : code };
    if (details && typeof details === 'object' && Object.keys(details).length > 0) body.details = details as Record<string, unknown>;
    return { status, body, log: status >= 500 };
  }
  const statusCode = fieldOf(error, 'statusCode');
  if (typeof code === 'string' && code.startsWith('FST_') && typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    const issue = FRAMEWORK_ISSUES[code] ?? { field: 'request', rule: code.slice(4).toLowerCase().replaceAll('_', '-') };
    const text = `${issue.field}: ${typeof message === 'string' ? message : 'rejected'} (${issue.rule})`;
    return { status: statusCode, body: { code: 'validation', message: text, details: { issues: [{ ...issue, message: text }] } }, log: false };
  }
  return { status: 500, body: serverError('internal', requestId), log: true };
}

/**
 * 5xx codes whose message and details are written for the caller (what to set, which executor did
 * not answer) and carry no paths: answered as they are, and logged too.
 */
const CALLER_FACING_CODES: ReadonlySet<ErrorCode> = new Set(['unavailable']);

function serverError(code: ErrorCode, requestId: string): HttpErrorBody {
  return { code, message: `internal error (${code}); this process's log has the details under request id ${requestId}` };
}

/** Turns Fastify's schema errors (ajv's) into Orrery's validation issues, one per field and rule. */
export function requestSchemaIssues(errors: readonly FastifySchemaValidationError[], where: string): ValidationIssue[] {
  return errors.map((e) => {
    const params = (e.params ?? {}) as Record<string, unknown>;
    const path = e.instancePath.replace(/^\//, '').replaceAll('/', '.');
    let field = path;
    let rule = e.keyword;
    if (e.keyword === 'required' && typeof params.missingProperty === 'string') {
      field = path ? `${path}.${params.missingProperty}` : params.missingProperty;
    } else if (e.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
      field = path ? `${path}.${params.additionalProperty}` : params.additionalProperty;
      rule = 'unknown-field';
    }
    const shown = field || where;
    const said = rule === 'unknown-field' ? 'is not a known field'
      : rule === 'required' ? 'is required'
      : rule === 'enum' && Array.isArray(params.allowedValues) ? `must be one of ${params.allowedValues.join(', ')}`
      : (e.message ?? 'is invalid');
    return { field: shown, rule, message: `${where} '${shown}' ${said} (${rule})` };
  });
}

/**
 * Answers a request the HTTP parser rejected, on the raw socket: a JSON 400 (431: headers too large;
 * 408: too slow) with `connection: close`, unless the socket is gone or a response is already
 * under way on it (it is only closed then).
 */
function answerClientError(wrap: boolean, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // Node's own rule: answer unless a response has started on this socket (writing into the
  // middle of it would corrupt what the peer reads). A `100 Continue` sent before does not count.
  const inFlight = (socket as unknown as { _httpMessage?: { _headerSent?: boolean } | null })._httpMessage;
  if (!socket.writable || inFlight?._headerSent) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const rule = (error.code ?? 'parse-error').toLowerCase().replaceAll('_', '-');
  const text = status === 431 ? `request headers: larger than this server accepts (${rule})`
    : status === 408 ? `request: not received whole in time (${rule})`
    : `request: not valid HTTP/1.1 (${rule})`;
  answerOnSocket(socket, status, { field: 'request', rule, message: text }, wrap);
}

/** Writes a JSON `validation` answer straight on a socket and closes it. */
function answerOnSocket(socket: Duplex, status: number, issue: ValidationIssue, wrap = false): void {
  const error = { code: 'validation', message: issue.message, details: { issues: [issue] } };
  const body = JSON.stringify(wrap ? { error } : error);
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  // A peer that never reads must not hold the socket open.
  setTimeout(() => socket.destroy(), HTTP_REQUEST_TIMEOUT_MS).unref();
}

/** Sends the one error answer (also used for the router's own errors). */
function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply, wrap = false): void {
  const answer = httpErrorAnswer(error, request.id);
  if (answer.log) request.log.error({ err: error, reqId: request.id, method: request.method, url: request.url.slice(0, QUOTED_TARGET_LENGTH) }, 'http request failed');
  if (answer.status === 401) void reply.header('www-authenticate', 'Bearer realm="orrery"');
  void reply.code(answer.status).type('application/json; charset=utf-8').send(wrap ? { error: answer.body } : answer.body);
}

/**
 * Fastify's `trustProxy` for a {@link TrustProxy} (pure). A hop count becomes proxy-addr's hop
 * rule as a function — trust the connection's peer and the next `hops - 1` addresses of
 * X-Forwarded-For, from its right end — because Fastify ignores a bare number (it trusts nothing).
 */
function fastifyTrustProxy(trust: TrustProxy | undefined): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  if (Array.isArray(trust)) return [...(trust as readonly string[])];
  return false;
}

/**
 * Builds the endpoint's Fastify app (not listening; `app.inject()` tests it): `/metrics`,
 * `/healthz`, the process's `routes`, the one error handler, the JSON 404 and the bounds above.
 */
export function createHttpApp(options: Omit<HttpEndpointOptions, 'port' | 'host'>): HttpApp {
  const wrap = options.wrapErrors === true;
  const app = Fastify({
    loggerInstance: (options.logger ?? silentLogger()) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: HTTP_BODY_LIMIT,
    requestTimeout: HTTP_REQUEST_TIMEOUT_MS,
    forceCloseConnections: true,
    trustProxy: fastifyTrustProxy(options.trustProxy),
    routerOptions: { maxParamLength: HTTP_MAX_PARAM_LENGTH },
    // Node would answer a missing Host with a bare 400 of its own; the hook below answers it in JSON.
    http: { requireHostHeader: false, maxHeaderSize: HTTP_MAX_HEADER_BYTES },
    clientErrorHandler: (error, socket) => answerClientError(wrap, error, socket),
    frameworkErrors: (error, request, reply) => sendError(error, request, reply, wrap),
    schemaErrorFormatter: (errors, where) => validationError(requestSchemaIssues(errors, where), 'request'),
    // Every problem at once, and unknown query fields refused rather than silently dropped.
    ajv: { customOptions: { allErrors: true, removeAdditional: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.server.maxConnections = options.maxConnections ?? HTTP_MAX_CONNECTIONS;
  // Node hands CONNECT and Upgrade requests to these events (closing the socket without a word
  // when nobody listens, or leaving the request half-parsed); nothing here tunnels or switches protocols.
  app.server.on('connect', (_request: unknown, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    answerOnSocket(socket, 400, { field: 'method', rule: 'method', message: 'method: CONNECT is not served here (method)' }, wrap);
  });
  app.server.on('upgrade', (_request: unknown, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    answerOnSocket(socket, 400, { field: 'upgrade', rule: 'unsupported', message: "header 'upgrade': switching protocols is not served here (unsupported)" }, wrap);
  });
  app.setErrorHandler((error: FastifyError, request, reply) => sendError(error, request, reply, wrap));
  // ajv's coercion turns `Infinity`, `1e400`, `0x10` and ` 5` into numbers — the first two past
  // `maximum` — so an integer in a query string must be plain decimal digits before ajv sees it.
  app.addHook('onRoute', (route) => {
    const properties = (route.schema?.querystring as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
    const integers = Object.keys(properties).filter((k) => properties[k]?.type === 'integer');
    if (integers.length === 0) return;
    const checkIntegers = async (request: FastifyRequest): Promise<void> => {
      const query = request.query as Record<string, unknown>;
      const issues = integers
        .filter((k) => typeof query[k] === 'string' && !/^-?[0-9]+$/.test(query[k]))
        .map((k) => ({ field: k, rule: 'type', message: `querystring '${k}' must be an integer in decimal digits (type)` }));
      if (issues.length > 0) throw validationError(issues, 'request');
    };
    const before = route.preValidation === undefined ? [] : [route.preValidation].flat();
    route.preValidation = [...before, checkIntegers];
  });
  app.addHook('onRequest', async (request) => {
    // RFC 9112 §3.2: an HTTP/1.1 request without exactly one Host is a 400.
    if (request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1 && request.headers.host === undefined) {
      throw validationError([{ field: 'host', rule: 'required', message: "header 'host' is required in HTTP/1.1 (required)" }], 'request');
    }
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!.slice(0, QUOTED_TARGET_LENGTH);
    sendError(Object.assign(new Error(`no route ${request.method} ${path}`), { code: 'not-found' }), request, reply, wrap);
  });
  app.get('/metrics', async (_request, reply) => {
    const text = await options.metrics.metrics();
    void reply.type(options.metrics.contentType);
    return text;
  });
  app.get('/healthz', async (_request, reply) => {
    const health = options.health();
    void reply.code(health.ok ? 200 : 503);
    return health;
  });
  const routes = options.routes;
  if (routes) void app.register(async (scope) => routes(scope));
  return app;
}

/** Starts the endpoint on `host:port` (default host {@link DEFAULT_HTTP_HOST}). */
export async function startHttpEndpoint(options: HttpEndpointOptions): Promise<HttpEndpoint> {
  const app = createHttpApp(options);
  try {
    await app.listen({ port: options.port, host: options.host ?? DEFAULT_HTTP_HOST });
  } catch (error) {
    await app.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    port: (app.server.address() as AddressInfo).port,
    close() {
      closing ??= app.close();
      return closing;
    },
  };
}
