/**
 * NamespaceInfo: a namespace's settings, the data of `paths.namespace`. Browser-safe.
 */
import { Type, type Static } from '@sinclair/typebox';
import { validationError } from '../errors.js';
import { isHttpUrl } from './job-config.js';
import { checkWith, isPlainObject, issue, type CheckResult } from './validate.js';

/** Default of `alarm.silenceSeconds`: at most one alarm per job (or executor) and kind in 5 minutes. */
export const ALARM_SILENCE_SECONDS_DEFAULT = 300;
/** Upper limit of `alarm.silenceSeconds`: one day. */
export const ALARM_SILENCE_SECONDS_MAX = 86_400;
/** Default of `alarm.timeoutSeconds`: how long one webhook POST may take before it is abandoned. */
export const ALARM_TIMEOUT_SECONDS_DEFAULT = 5;
/** Upper limit of `alarm.timeoutSeconds`. */
export const ALARM_TIMEOUT_SECONDS_MAX = 60;
/** Default of `alarm.retries`: POSTs after the first one when the webhook is unreachable or answers 5xx. */
export const ALARM_RETRIES_DEFAULT = 3;
/** Upper limit of `alarm.retries`. */
export const ALARM_RETRIES_MAX = 10;

export const NamespaceInfoSchema = Type.Object(
  {
    description: Type.String({ maxLength: 2000, default: '' }),
    alarm: Type.Object(
      {
        /** Where executor-lost, failover, unassigned-shard and run alarms are POSTed (JSON). */
        webhook: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
        /** At most one alarm per job (or executor) and kind within this many seconds. */
        silenceSeconds: Type.Integer({ minimum: 0, maximum: ALARM_SILENCE_SECONDS_MAX, default: ALARM_SILENCE_SECONDS_DEFAULT }),
        /** One POST's timeout in seconds. Default {@link ALARM_TIMEOUT_SECONDS_DEFAULT} when absent. */
        timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: ALARM_TIMEOUT_SECONDS_MAX })),
        /** Retries (with backoff) after a network error or a 5xx, never after a 4xx. Default {@link ALARM_RETRIES_DEFAULT} when absent. */
        retries: Type.Optional(Type.Integer({ minimum: 0, maximum: ALARM_RETRIES_MAX })),
      },
      { default: {}, additionalProperties: false },
    ),
    /** Epoch ms when the namespace was created. */
    createdAt: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

/** A namespace's settings. */
export type NamespaceInfo = Static<typeof NamespaceInfoSchema>;

/** Validates and normalises NamespaceInfo. */
export function checkNamespaceInfo(input: unknown): CheckResult<NamespaceInfo> {
  if (input === null || input === undefined) input = {};
  if (!isPlainObject(input)) return { ok: false, issues: [issue('', 'type', 'namespace settings must be an object')] };
  const result = checkWith<NamespaceInfo>(NamespaceInfoSchema, input, 'namespace settings');
  if (result.ok && result.value.alarm.webhook !== undefined && !isHttpUrl(result.value.alarm.webhook)) {
    return { ok: false, issues: [issue('alarm.webhook', 'url', `'${result.value.alarm.webhook}' must be an http:// or https:// URL`)] };
  }
  return result;
}

/** Like {@link checkNamespaceInfo}, but throws a `validation` error. */
export function parseNamespaceInfo(input: unknown): NamespaceInfo {
  const r = checkNamespaceInfo(input);
  if (!r.ok) throw validationError(r.issues, 'namespace settings');
  return r.value;
}
