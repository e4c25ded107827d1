/**
 * The one API client: `fetch` with the session cookie, JSON in and out, and one typed error for
 * every failure ({@link ApiError}) — the API's `{error: {code, message, details}}`, or a network
 * failure as status 0. Every query and mutation of the UI goes through {@link api}.
 */

/** The API's path prefix. */
export const API_BASE = '/api/v1';

/** One problem of a request, as the server's validation names it. */
export interface ApiIssue {
  field: string;
  rule: string;
  message: string;
}

/** A failed API call: the HTTP status (0: the console could not be reached), the error code and message. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    /** HTTP status; 0 when no answer came (network, CORS, aborted). */
    readonly status: number,
    /** The API's error code (`validation`, `no-auth`, `forbidden`, `not-found`, `conflict`, …; `network` for status 0). */
    readonly code: string,
    message: string,
    /** `details.issues` of a validation error (empty otherwise). */
    readonly issues: readonly ApiIssue[] = [],
    /** The error's `details`, as sent. */
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }

  /** The issues naming `field` (or a field under it: `config.cron` for `config`). */
  issuesFor(field: string): ApiIssue[] {
    return this.issues.filter((i) => i.field === field || i.field.startsWith(`${field}.`) || i.field.startsWith(`${field}[`));
  }
}

/** True when `error` is an {@link ApiError} with one of `codes` (or any code when none given). */
export function isApiError(error: unknown, ...codes: string[]): error is ApiError {
  return error instanceof ApiError && (codes.length === 0 || codes.includes(error.code));
}

/** Options of {@link api}. */
export interface ApiOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Sent as JSON. */
  body?: unknown;
  /** Query parameters; undefined, null and '' values are left out. */
  query?: Readonly<Record<string, string | number | boolean | null | undefined>>;
  signal?: AbortSignal;
}

/** `path` (under {@link API_BASE}) with `query` appended. */
export function apiUrl(path: string, query?: ApiOptions['query']): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const search = params.toString();
  return `${API_BASE}${path}${search ? `?${search}` : ''}`;
}

/** Encodes one path segment (a namespace, a job name). */
export const seg = (value: string): string => encodeURIComponent(value);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The {@link ApiError} for a failed answer (pure). */
export function errorFromAnswer(status: number, body: unknown, statusText = ''): ApiError {
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  if (!error) return new ApiError(status, status === 404 ? 'not-found' : 'http', statusText || `HTTP ${status}`);
  const details = isRecord(error.details) ? error.details : {};
  const issues = Array.isArray(details.issues)
    ? details.issues.filter(isRecord).map((i) => ({ field: String(i.field ?? ''), rule: String(i.rule ?? ''), message: String(i.message ?? '') }))
    : [];
  return new ApiError(status, typeof error.code === 'string' ? error.code : 'http', typeof error.message === 'string' ? error.message : `HTTP ${status}`, issues, details);
}

/**
 * Calls the API: resolves to the parsed JSON body (undefined for 204), or throws an {@link ApiError}.
 * The session cookie goes with every call (`credentials: 'same-origin'`).
 */
export async function api<T>(path: string, options: ApiOptions = {}): Promise<T> {
  const init: RequestInit = { method: options.method ?? 'GET', credentials: 'same-origin', headers: { accept: 'application/json' } };
  if (options.signal) init.signal = options.signal;
  if (options.body !== undefined) {
    init.body = JSON.stringify(options.body);
    init.headers = { ...init.headers, 'content-type': 'application/json' };
  }
  let response: Response;
  try {
    response = await fetch(apiUrl(path, options.query), init);
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === 'AbortError') throw cause;
    throw new ApiError(0, 'network', cause instanceof Error ? cause.message : String(cause));
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) throw errorFromAnswer(response.status, body, response.statusText);
  return body as T;
}
