/**
 * Orrery's one error type. Every error that crosses a module or process boundary is an
 * {@link OrreryError} with a string {@link ErrorCode}; recognise errors by `code`, never by
 * `instanceof`, once they have crossed a process boundary.
 *
 * `docs/errors.md` lists every code with its meaning, whether it is retryable, and the
 * HTTP status every HTTP answer uses for it ({@link HTTP_STATUS}).
 */

/** Every error code Orrery raises, with whether an operation that failed with it may be retried. */
export const ERROR_CODES = {
  // ZooKeeper results
  'no-node': false,
  'node-exists': false,
  'bad-version': false,
  'not-empty': false,
  'no-children-for-ephemerals': false,
  'connection-loss': true,
  'operation-timeout': true,
  'session-expired': true,
  'session-moved': true,
  // A request still in flight when its handle closed: after a lost session the client closes the
  // old handle and opens a new one, so the request was lost with the session, like `session-expired`.
  // (After close() itself, a retry fails with `closed`, which is final.)
  'closing': true,
  'not-connected': true,
  'auth-failed': false,
  'no-auth': false,
  'bad-arguments': false,
  'zookeeper-error': true,
  // Orrery rules
  'validation': false,
  'bad-data': false,
  'conflict': false,
  'not-found': false,
  'already-exists': false,
  'forbidden': false,
  'too-many-requests': true,
  'usage': false,
  'timeout': true,
  'unavailable': true,
  'closed': false,
  'internal': false,
} as const satisfies Record<string, boolean>;

/** The string code of an {@link OrreryError}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * The HTTP status every HTTP answer of Orrery uses for an error with each code (the one table:
 * the processes' endpoints and the console map codes through it; `docs/errors.md` shows it).
 * 5xx answers carry a generic message; the full error goes to the process's log.
 */
export const HTTP_STATUS = {
  'no-node': 404,
  'node-exists': 409,
  'bad-version': 409,
  'not-empty': 409,
  'no-children-for-ephemerals': 500,
  'connection-loss': 503,
  'operation-timeout': 503,
  'session-expired': 503,
  'session-moved': 503,
  'closing': 503,
  'not-connected': 503,
  'auth-failed': 403,
  'no-auth': 401,
  'bad-arguments': 400,
  'zookeeper-error': 500,
  'validation': 400,
  'bad-data': 500,
  'conflict': 409,
  'not-found': 404,
  'already-exists': 409,
  'forbidden': 403,
  'too-many-requests': 429,
  'usage': 400,
  'timeout': 504,
  'unavailable': 503,
  'closed': 503,
  'internal': 500,
} as const satisfies Record<ErrorCode, number>;

/** One problem found by validation: which field, which rule, and a sentence for people. */
export interface ValidationIssue {
  /** Dotted path of the field, e.g. `jobs[2].misfire.thresholdSeconds`; `''` for the whole value. */
  field: string;
  /** Short name of the rule that failed, e.g. `minimum`, `pattern`, `cron`, `unknown-field`. */
  rule: string;
  /** A complete sentence naming the field and the rule. */
  message: string;
}

/** Options of {@link OrreryError}. */
export interface OrreryErrorOptions {
  /** Structured data for logs and API answers (must be JSON-serialisable). */
  details?: Record<string, unknown>;
  /** The error this one wraps. */
  cause?: unknown;
  /** Overrides the code's default retryability. */
  retryable?: boolean;
}

/** The single error class of Orrery. */
export class OrreryError extends Error {
  override readonly name = 'OrreryError';
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: OrreryErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? ERROR_CODES[code];
    this.details = options.details ?? {};
  }

  /** A plain object for JSON answers and logs. */
  toJSON(): { code: ErrorCode; message: string; retryable: boolean; details: Record<string, unknown> } {
    return { code: this.code, message: this.message, retryable: this.retryable, details: this.details };
  }
}

/** Normalises anything thrown into an `Error` (use in every `catch`). */
export function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  if (typeof value === 'string') return new Error(value);
  try {
    return new Error(`non-error thrown: ${JSON.stringify(value)}`);
  } catch {
    return new Error(`non-error thrown: ${String(value)}`);
  }
}

/** True when `value` is an error carrying `code` (works across realms and processes). */
export function hasErrorCode(value: unknown, ...codes: ErrorCode[]): value is OrreryError {
  if (typeof value !== 'object' || value === null) return false;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' && (codes as string[]).includes(code);
}

/** The error's code when it carries one of Orrery's codes (works across realms and processes); else undefined. */
export function errorCode(value: unknown): ErrorCode | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code) ? (code as ErrorCode) : undefined;
}

/** True when the error says the operation may succeed if tried again. */
export function isRetryable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { retryable?: unknown }).retryable === true;
}

/** A `validation` error listing every issue (message names the first few fields and rules). */
export function validationError(issues: ValidationIssue[], what = 'value'): OrreryError {
  const shown = issues.slice(0, 5).map((i) => i.message);
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : '';
  return new OrreryError('validation', `invalid ${what}: ${shown.join('; ')}${more}`, {
    details: { issues },
  });
}
