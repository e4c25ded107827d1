/**
 * NamespaceInfo: a namespace's settings, the data of `paths.namespace`. Browser-safe.
 */
import { Type, type Static } from '@sinclair/typebox';
import { validationError } from '../errors.js';
import { isHttpUrl } from './job-config.js';
import { checkWith, isPlainObject, issue, type CheckResult } from './validate.js';

export const NamespaceInfoSchema = Type.Object(
  {
    description: Type.String({ maxLength: 2000, default: '' }),
    alarm: Type.Object(
      {
        /** Where executor-lost, failover, unassigned-shard and run alarms are POSTed (JSON). */
        webhook: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
        /** At most one alarm per job and kind within this many seconds. */
        silenceSeconds: Type.Integer({ minimum: 0, maximum: 86_400, default: 300 }),
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
