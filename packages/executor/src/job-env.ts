/**
 * The environment a job starts with: the executor's own, minus Orrery's secrets, plus the job
 * contract's variables (which always win). Pure.
 *
 * Guarantees: no variable named in {@link BUILT_IN_SECRET_ENV} nor matched by a `--secret-env` entry
 * reaches a shell job or a Node job worker (so neither `env` nor `process.env` shows it).
 * Not guaranteed: that a job cannot find a secret some other way (a file it can read, `/proc` of a
 * process of the same user, a value copied into another variable's value) — run the executor as a
 * user whose files hold nothing the jobs must not see.
 */
import type { ValidationIssue } from '@orrery/core';

/**
 * Orrery's own secrets, never given to a job: the cluster token (run-history endpoint), ZooKeeper's
 * digest credentials (`user:password`), and the console's admin password.
 */
export const BUILT_IN_SECRET_ENV = Object.freeze(['ORRERY_CLUSTER_TOKEN', 'ORRERY_ZK_AUTH', 'ORRERY_ADMIN_PASSWORD'] as const);

/**
 * A `--secret-env` entry: a variable name, or a name prefix followed by `*` (`AWS_*` matches every
 * variable whose name starts with `AWS_`). A `*` alone is refused: it would take `PATH` and `HOME`
 * from every job.
 */
export const SECRET_ENV_ENTRY = /^[A-Za-z_][A-Za-z0-9_]*\*?$/;

/**
 * Parses a `--secret-env` / `ORRERY_SECRET_ENV` list (`NAME[,NAME…]`, `PREFIX*` allowed; blanks
 * around commas ignored; duplicates once): the entries, and an issue naming `field` for every bad one.
 */
export function parseSecretEnv(list: string, field = '--secret-env'): { names: string[]; issues: ValidationIssue[] } {
  const entries = list.split(',').map((e) => e.trim()).filter(Boolean);
  const issues: ValidationIssue[] = entries
    .filter((e) => !SECRET_ENV_ENTRY.test(e))
    .map((e) => ({ field, rule: 'pattern', message: `${field}: '${e}' must be a variable name or a name prefix followed by * (like AWS_*)` }));
  return { names: [...new Set(entries.filter((e) => SECRET_ENV_ENTRY.test(e)))], issues };
}

/** True when `name` is one of Orrery's built-in secrets or matches an entry of `secrets`. */
export function isSecretEnv(name: string, secrets: readonly string[] = []): boolean {
  if ((BUILT_IN_SECRET_ENV as readonly string[]).includes(name)) return true;
  return secrets.some((s) => (s.endsWith('*') ? name.startsWith(s.slice(0, -1)) : name === s));
}

/**
 * The environment of a job: `base` (the executor's environment) without Orrery's secrets
 * ({@link BUILT_IN_SECRET_ENV}) and without what `secrets` names (entries as {@link parseSecretEnv}
 * returns them), then `contract` (the `ORRERY_*` variables of the run), which always wins — even over
 * a secret entry that matches one of its names. Variables whose value is `undefined` are left out.
 */
export function jobEnvironment(
  base: Readonly<Record<string, string | undefined>>,
  secrets: readonly string[] = [],
  contract: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && !isSecretEnv(name, secrets)) env[name] = value;
  }
  return Object.assign(env, contract);
}

/** Secret values shorter than this are not redacted (they would match ordinary text: `1`, `yes`). */
export const SECRET_VALUE_MIN_LENGTH = 6;

/**
 * The values of the variables {@link jobEnvironment} hides from jobs (Orrery's own secrets and what
 * `secrets` names), longest first — what {@link redactSecrets} takes out of a run's message. Pure.
 */
export function secretValues(base: Readonly<Record<string, string | undefined>>, secrets: readonly string[] = []): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && value.length >= SECRET_VALUE_MIN_LENGTH && isSecretEnv(name, secrets)) values.add(value);
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/**
 * `text` with every occurrence of each of `values` replaced by `[redacted]`: a job that prints a
 * secret the executor holds (say in its last stderr line, which becomes the shard's message) does
 * not put it in ZooKeeper or an alarm. Pure.
 */
export function redactSecrets(text: string, values: readonly string[]): string {
  let out = text;
  for (const value of values) if (out.includes(value)) out = out.split(value).join('[redacted]');
  return out;
}
