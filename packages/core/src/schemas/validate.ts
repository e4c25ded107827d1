/**
 * Turns TypeBox validation into Orrery's {@link ValidationIssue}s: each names the field (dotted path)
 * and the rule, in a sentence people can act on. Browser-safe.
 */
import type { TSchema, Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ValueErrorType } from '@sinclair/typebox/errors';
import type { ValidationIssue } from '../errors.js';

const TYPE_PREFIX = /^(Array|BigInt|Boolean|Date|Function|Integer|Intersect|Iterator|Kind|Literal|Never|Not|Null|Number|Object|Promise|RegExp|String|Symbol|TemplateLiteral|Tuple|Uint8Array|Undefined|Union|Void)/;

const RULE_OVERRIDES: Record<string, string> = {
  ObjectAdditionalProperties: 'unknown-field',
  ObjectRequiredProperty: 'required',
  Union: 'one-of',
  Literal: 'one-of',
};

function ruleName(type: ValueErrorType): string {
  const name = ValueErrorType[type] ?? 'invalid';
  if (RULE_OVERRIDES[name]) return RULE_OVERRIDES[name]!;
  const rest = name.replace(TYPE_PREFIX, '');
  if (rest === '') return 'type';
  return rest.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
}

/** `/a/b/0/c` → `a.b[0].c`, under an optional prefix. */
export function fieldName(pointer: string, prefix = ''): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let out = prefix;
  for (const part of parts) {
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out;
}

/** Describes an allowed set of literals for a union error, e.g. `'skip', 'queue' or 'replace'`. */
function literalChoices(schema: TSchema): string | undefined {
  const anyOf = (schema as { anyOf?: Array<{ const?: unknown }> }).anyOf;
  if (!anyOf || !anyOf.every((s) => s.const !== undefined)) return undefined;
  const values = anyOf.map((s) => JSON.stringify(s.const));
  return values.length > 1 ? `${values.slice(0, -1).join(', ')} or ${values.at(-1)}` : values[0];
}

/** Makes an issue. */
export function issue(field: string, rule: string, text: string): ValidationIssue {
  return { field, rule, message: `${field || 'value'}: ${text}` };
}

/** Every structural problem of `value` against `schema`, with field names under `prefix`. */
export function schemaIssues(schema: TSchema, value: unknown, prefix = ''): ValidationIssue[] {
  // Most values are valid: the plain check is about half the cost of walking the errors (which
  // builds an iterator and an object per step) — every config, shard state and assignment read
  // comes through here.
  if (Value.Check(schema, value)) return [];
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of Value.Errors(schema, value)) {
    const field = fieldName(error.path, prefix);
    const rule = ruleName(error.type);
    // A union reports itself and each branch; keep the first problem per field.
    if (seen.has(field)) continue;
    seen.add(field);
    let text = error.message.charAt(0).toLowerCase() + error.message.slice(1);
    if (rule === 'unknown-field') text = 'unknown field (not part of the schema)';
    if (rule === 'one-of') {
      const choices = literalChoices(error.schema);
      if (choices) text = `must be ${choices} (got ${JSON.stringify(error.value)})`;
    }
    issues.push(issue(field, rule, text));
  }
  return issues;
}

/** Applies the schema's defaults to a deep copy of `value`. */
export function withDefaults<S extends TSchema>(schema: S, value: unknown): Static<S> {
  return Value.Default(schema, Value.Clone(value)) as Static<S>;
}

/** True when `value` is a plain object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The outcome of a check: the normalised value, or every issue. */
export type CheckResult<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/** Fills defaults and validates an object against `schema`; `what` names it in the message. */
export function checkWith<T>(schema: TSchema, input: unknown, what: string): CheckResult<T> {
  if (!isPlainObject(input)) return { ok: false, issues: [issue('', 'type', `${what} must be an object`)] };
  const filled = withDefaults(schema, input);
  const issues = schemaIssues(schema, filled);
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: filled as T };
}

/** Edit distance (insertions, deletions, substitutions, adjacent swaps), case-insensitive. */
function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) => Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= s.length; i += 1) {
    for (let j = 1; j <= t.length; j += 1) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[s.length]![t.length]!;
}

/** True when the characters of `short` appear in `long` in order (case-insensitive). */
function isSubsequence(short: string, long: string): boolean {
  const s = short.toLowerCase();
  const l = long.toLowerCase();
  let i = 0;
  for (const ch of l) if (i < s.length && ch === s[i]) i += 1;
  return i === s.length;
}

/**
 * The field a person most likely meant by an unknown `name`, among `known`: a small edit away
 * (`cronn`, `enable`), the same words with one left out or added (`shardingCount` →
 * `shardingTotalCount`), or a different case (`TimeZone`). Undefined when nothing is close. Pure.
 */
export function suggestField(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    const close = distance <= Math.max(1, Math.min(3, Math.floor(candidate.length / 4)))
      || (Math.min(name.length, candidate.length) >= 4 && (isSubsequence(name, candidate) || isSubsequence(candidate, name)));
    if (close && distance < bestScore) {
      best = candidate;
      bestScore = distance;
    }
  }
  return best;
}
