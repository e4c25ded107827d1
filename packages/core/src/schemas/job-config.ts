/**
 * JobConfig: one job's whole configuration, stored as one JSON node (`paths.job`) and changed only
 * by versioned compare-and-set. Browser-safe: the console API, the CLI and the UI share it.
 */
import { Type, type Static } from '@sinclair/typebox';
import { OrreryError, validationError, type ValidationIssue } from '../errors.js';
import { cronIssues } from '../cron/schedule.js';
import { parsePausePeriods } from '../cron/pause-period.js';
import { isValidTimeZone } from '../cron/time-zone.js';
import { JOB_NAME_PATTERN, NODE_NAME_PATTERN } from '../layout.js';
import { jsonEqual } from './canonical-json.js';
import { isPlainObject, issue, schemaIssues, suggestField, withDefaults } from './validate.js';

const literals = <T extends string>(values: readonly T[], def?: T) =>
  Type.Union(values.map((v) => Type.Literal(v)), def === undefined ? {} : { default: def });

/** `[A-Za-z0-9_-]{1,64}`, not `__proto__`: job and handler names. */
export const JobNameSchema = Type.String({ pattern: JOB_NAME_PATTERN.source, description: 'letters, digits, _ and -, 1 to 64; not __proto__' });
/** An executor name, or `@tag` for every executor started with that tag. */
export const PreferEntrySchema = Type.String({ pattern: `^(@[A-Za-z0-9_.-]{1,64}|${NODE_NAME_PATTERN.source.slice(1, -1)})$` });

/** The job types. */
export const JOB_TYPES = ['shell', 'node'] as const;
/** What happens when a fire finds the shard still running: drop it, run it after, or stop the old run. */
export const OVERLAP_POLICIES = ['skip', 'queue', 'replace'] as const;
/** What happens to a fire that was missed: never run it late, or run it once if not too late. */
export const MISFIRE_POLICIES = ['skip', 'fire-once'] as const;

/** The JobConfig schema, with every default. */
export const JobConfigSchema = Type.Object(
  {
    name: JobNameSchema,
    description: Type.String({ maxLength: 2000, default: '' }),
    type: literals(JOB_TYPES),
    /** Shell jobs: run as `/bin/sh -c command`. */
    command: Type.Optional(Type.String({ minLength: 1, maxLength: 65_536 })),
    /** Node jobs: the `name` of a `defineJob` module the executor loaded. */
    handler: Type.Optional(JobNameSchema),
    /** 5 or 6 fields (seconds first); absent: a passive job that runs only when triggered. */
    cron: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    timeZone: Type.String({ default: 'UTC', maxLength: 64 }),
    shardingTotalCount: Type.Integer({ minimum: 1, maximum: 10_000, default: 1 }),
    /** Item → parameter; Saturn's `"0=a,1=b"` string is accepted on input. */
    shardingItemParameters: Type.Record(Type.String(), Type.String({ maxLength: 4096 }), { default: {} }),
    jobParameter: Type.String({ maxLength: 65_536, default: '' }),
    /** One shard per eligible executor (broadcast); no failover. */
    localMode: Type.Boolean({ default: false }),
    /** Weight of each shard for the allocator. */
    loadLevel: Type.Integer({ minimum: 1, maximum: 100_000, default: 1 }),
    preferList: Type.Array(PreferEntrySchema, { default: [], uniqueItems: true, maxItems: 1000 }),
    /** Fall back to other executors while no preferred one is online. */
    useDispreferList: Type.Boolean({ default: true }),
    /** 0 = no timeout. */
    timeoutSeconds: Type.Integer({ minimum: 0, maximum: 30 * 86_400, default: 0 }),
    enabled: Type.Boolean({ default: false }),
    /** Re-run a crashed run's fire on another executor; default true, and always false in localMode. */
    failover: Type.Optional(Type.Boolean()),
    /** `MM/dd-MM/dd[,…]`, in the job's time zone. */
    pausePeriodDate: Type.String({ default: '', maxLength: 1000 }),
    /** `HH:mm-HH:mm[,…]`, in the job's time zone. */
    pausePeriodTime: Type.String({ default: '', maxLength: 1000 }),
    overlap: literals(OVERLAP_POLICIES, 'skip'),
    misfire: Type.Object(
      {
        policy: literals(MISFIRE_POLICIES, 'fire-once'),
        thresholdSeconds: Type.Integer({ minimum: 0, maximum: 86_400, default: 5 }),
      },
      { default: {}, additionalProperties: false },
    ),
    retry: Type.Object(
      {
        count: Type.Integer({ minimum: 0, maximum: 100, default: 0 }),
        backoffSeconds: Type.Integer({ minimum: 0, maximum: 86_400, default: 0 }),
      },
      { default: {}, additionalProperties: false },
    ),
    /** Jobs triggered once when every shard of a fire of this job succeeded. */
    downstream: Type.Array(JobNameSchema, { default: [], uniqueItems: true, maxItems: 100 }),
    groups: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { default: [], uniqueItems: true, maxItems: 100 }),
    alarm: Type.Object(
      {
        webhook: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
        onFailure: Type.Boolean({ default: true }),
        onTimeout: Type.Boolean({ default: true }),
      },
      { default: {}, additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** A validated, normalised job configuration (every default filled in). */
export type JobConfig = Omit<Static<typeof JobConfigSchema>, 'failover'> & { failover: boolean };

/** What a person may write: any subset of fields with defaults, Saturn's string forms allowed. */
export type JobConfigInput = Partial<Omit<JobConfig, 'shardingItemParameters' | 'preferList'>> & {
  name: string;
  type: JobConfig['type'];
  shardingItemParameters?: Record<string, string> | string;
  preferList?: string[] | string;
};

/**
 * The largest a job config may be, in bytes of its stored JSON (UTF-8, every default filled in):
 * 256 KiB. It keeps every job node well inside what ZooKeeper's client reads reliably and what the
 * server accepts (`jute.maxbuffer`; see docs/job-config.md), so no config can cost a reader its
 * session. Checked by {@link checkJobConfig} before anything is written.
 */
export const JOB_CONFIG_MAX_BYTES = 256 * 1024;

/** The number of bytes of `text` in UTF-8 (browser-safe: no Buffer). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** The fields of a JobConfig, in display order. */
export const JOB_CONFIG_FIELDS = Object.keys(JobConfigSchema.properties) as Array<keyof JobConfig>;

/** Parses Saturn's `"0=a,1=b"` item parameters; problems go to `issues`. */
export function parseItemParameters(text: string, issues: ValidationIssue[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (text.trim() === '') return out;
  for (const raw of text.split(',')) {
    const part = raw.trim();
    const eq = part.indexOf('=');
    if (eq <= 0) {
      issues.push(issue('shardingItemParameters', 'format', `'${part}' must be ITEM=VALUE (Saturn's form is "0=a,1=b")`));
      continue;
    }
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

/** True for an absolute http(s) URL. */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Field names of the schedulers Orrery's users come from (Saturn, XXL-JOB, ElasticJob), and what
 * Orrery calls them: an unknown field with one of these names gets the right one suggested.
 */
export const PEER_FIELD_NAMES: Readonly<Record<string, string>> = Object.freeze({
  jobName: 'name',
  jobType: 'type',
  jobClass: 'handler',
  jobHandler: 'handler',
  executorHandler: 'handler',
  scheduleConf: 'cron',
  cronExpression: 'cron',
  jobDesc: 'description',
  executorParam: 'jobParameter',
  executorTimeout: 'timeoutSeconds',
  executorFailRetryCount: 'retry',
  executorBlockStrategy: 'overlap',
  misfireStrategy: 'misfire',
  misfire_strategy: 'misfire',
  downStream: 'downstream',
  childJobId: 'downstream',
  shardingTotal: 'shardingTotalCount',
});

/** The known fields of each object of a JobConfig, for suggestions. */
const NESTED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  misfire: ['policy', 'thresholdSeconds'],
  retry: ['count', 'backoffSeconds'],
  alarm: ['webhook', 'onFailure', 'onTimeout'],
};

/** An unknown-field issue with the field the person most likely meant. */
function withSuggestion(problem: ValidationIssue): ValidationIssue {
  if (problem.rule !== 'unknown-field') return problem;
  const dot = problem.field.lastIndexOf('.');
  const parent = dot < 0 ? '' : problem.field.slice(0, dot);
  const name = problem.field.slice(dot + 1);
  const known = parent === '' ? (JOB_CONFIG_FIELDS as readonly string[]) : NESTED_FIELDS[parent];
  if (!known) return problem;
  const peer = parent === '' ? PEER_FIELD_NAMES[name] : undefined;
  const meant = peer ?? suggestField(name, known);
  if (!meant) return problem;
  const text = peer ? `unknown field; Orrery calls it '${meant}'` : `unknown field; did you mean '${meant}'?`;
  return issue(problem.field, problem.rule, text);
}

/**
 * Validates and normalises a job configuration. Returns every issue at once (each naming the field
 * and the rule; an unknown field with the field most likely meant) or the normalised config; never
 * throws. A field with the wrong type does not hide the other fields' problems: each rule that
 * spans fields runs when the fields it reads are well-typed.
 */
export function checkJobConfig(input: unknown): { ok: true; value: JobConfig } | { ok: false; issues: ValidationIssue[] } {
  if (!isPlainObject(input)) return { ok: false, issues: [issue('', 'type', 'a job must be an object')] };
  const issues: ValidationIssue[] = [];
  const draft: Record<string, unknown> = { ...input };
  // Saturn's string forms, accepted on input only.
  if (typeof draft.shardingItemParameters === 'string') draft.shardingItemParameters = parseItemParameters(draft.shardingItemParameters, issues);
  if (typeof draft.preferList === 'string') draft.preferList = draft.preferList.split(',').map((s) => s.trim()).filter(Boolean);
  if (draft.cron === '' || draft.cron === null) delete draft.cron;

  const filled = withDefaults(JobConfigSchema, draft);
  const structural = schemaIssues(JobConfigSchema, filled).map(withSuggestion);
  issues.push(...structural);
  // Top-level fields with a structural problem: rules that read them wait until they are fixed.
  const broken = new Set(structural.map((i) => i.field.split(/[.[]/)[0] ?? ''));
  const fine = (...fields: string[]): boolean => fields.every((f) => !broken.has(f));

  const c = filled as Static<typeof JobConfigSchema>;
  if (fine('type', 'command', 'handler')) {
    if (c.type === 'shell') {
      if (c.command === undefined) issues.push(issue('command', 'required', "required for a job of type 'shell'"));
      if (c.handler !== undefined) issues.push(issue('handler', 'not-allowed', "only a job of type 'node' has a handler"));
    } else {
      if (c.handler === undefined) issues.push(issue('handler', 'required', "required for a job of type 'node'"));
      if (c.command !== undefined) issues.push(issue('command', 'not-allowed', "only a job of type 'shell' has a command"));
    }
  }
  if (fine('cron') && c.cron !== undefined) issues.push(...cronIssues(c.cron));
  if (fine('timeZone') && !isValidTimeZone(c.timeZone)) issues.push(issue('timeZone', 'time-zone', `'${c.timeZone}' is not a known IANA time zone (e.g. UTC, Europe/Berlin)`));
  if (fine('shardingItemParameters', 'shardingTotalCount')) {
    for (const key of Object.keys(c.shardingItemParameters)) {
      const n = /^(0|[1-9]\d*)$/.test(key) ? Number(key) : NaN;
      if (!(n >= 0 && n < c.shardingTotalCount)) {
        issues.push(issue(`shardingItemParameters.${key}`, 'item-range', `item '${key}' must be an integer from 0 to shardingTotalCount - 1 (${c.shardingTotalCount - 1})`));
      }
    }
  }
  if (fine('downstream', 'name') && c.downstream.includes(c.name)) issues.push(issue('downstream', 'self-reference', `a job cannot be its own downstream ('${c.name}')`));
  if (fine('localMode', 'failover') && c.localMode && c.failover === true) issues.push(issue('failover', 'local-mode', 'must be false when localMode is true (a localMode shard belongs to its executor)'));
  if (fine('alarm') && c.alarm.webhook !== undefined && !isHttpUrl(c.alarm.webhook)) issues.push(issue('alarm.webhook', 'url', `'${c.alarm.webhook}' must be an http:// or https:// URL`));
  if (fine('pausePeriodDate', 'pausePeriodTime')) parsePausePeriods(c.pausePeriodDate, c.pausePeriodTime, issues);
  if (issues.length > 0) return { ok: false, issues };

  // Stored and shown in schema order, every default explicit.
  const normalised = { ...c, failover: c.failover ?? !c.localMode } as Record<string, unknown>;
  const value = Object.fromEntries(JOB_CONFIG_FIELDS.filter((f) => normalised[f] !== undefined).map((f) => [f, normalised[f]])) as JobConfig;
  const bytes = utf8Length(JSON.stringify(value));
  if (bytes > JOB_CONFIG_MAX_BYTES) {
    return { ok: false, issues: [issue('', 'max-size', `the job config is ${bytes} bytes as stored JSON; the limit is ${JOB_CONFIG_MAX_BYTES} bytes (256 KiB) — keep large data out of the config (a file the command reads, say)`)] };
  }
  return { ok: true, value };
}

/** Like {@link checkJobConfig}, but throws a `validation` {@link OrreryError}. */
export function parseJobConfig(input: unknown): JobConfig {
  const result = checkJobConfig(input);
  if (!result.ok) {
    const name = isPlainObject(input) && typeof input.name === 'string' ? ` '${input.name}'` : '';
    throw validationError(result.issues, `job${name}`);
  }
  return result.value;
}

/**
 * Checks a set of jobs together: duplicate names, and downstream cycles (A → B → A). Each issue's
 * field is prefixed with `jobs[i].`.
 */
export function jobSetIssues(jobs: readonly JobConfig[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const index = new Map<string, number>();
  jobs.forEach((job, i) => {
    if (index.has(job.name)) issues.push(issue(`jobs[${i}].name`, 'unique', `'${job.name}' is defined twice (also jobs[${index.get(job.name)}])`));
    else index.set(job.name, i);
  });
  const byName = new Map(jobs.map((j) => [j.name, j]));
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, trail: string[]): void => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') {
      const cycle = [...trail.slice(trail.indexOf(name)), name];
      issues.push(issue(`jobs[${index.get(cycle[0]!)}].downstream`, 'cycle', `downstream jobs form a cycle: ${cycle.join(' → ')}`));
      return;
    }
    state.set(name, 'visiting');
    for (const next of byName.get(name)?.downstream ?? []) if (byName.has(next) && next !== name) visit(next, [...trail, name]);
    state.set(name, 'done');
  };
  for (const job of jobs) visit(job.name, []);
  return issues;
}

/** Field-by-field differences between two configs (for `apply`'s diff). */
export function diffJobConfig(before: JobConfig, after: JobConfig): Array<{ field: keyof JobConfig; before: unknown; after: unknown }> {
  const changes: Array<{ field: keyof JobConfig; before: unknown; after: unknown }> = [];
  const fields = new Set([...Object.keys(before), ...Object.keys(after)] as Array<keyof JobConfig>);
  for (const field of fields) {
    if (!jsonEqual(before[field], after[field])) changes.push({ field, before: before[field], after: after[field] });
  }
  return changes;
}

/** Throws unless `name` is a valid job name. */
export function assertJobName(name: string): void {
  if (!JOB_NAME_PATTERN.test(name)) {
    throw new OrreryError('validation', `job name '${name}' is invalid: it must match ${JOB_NAME_PATTERN.source}`, {
      details: { issues: [issue('name', 'pattern', `must match ${JOB_NAME_PATTERN.source}`)] },
    });
  }
}
