/**
 * Saturn job configs → Orrery job configs (pure): what `orrery -n NS import-saturn FILE` applies.
 *
 * Reads a JSON export of Saturn job configs — a list, or an object holding one under `jobs` or
 * `data` — with Saturn's field names. Shell jobs (`SHELL_JOB`, `PASSIVE_SHELL_JOB`) become Orrery
 * shell jobs; every other job type (Java, message, …) is refused with the reason. Each field Saturn
 * has and Orrery does not is named with why it is not carried over; a field carried over in a
 * changed form is named too. The result is a job document (`{ jobs: [...] }`) for the same
 * validation, diff and compare-and-set as `orrery apply`: nothing here writes.
 *
 * Two choices a Saturn user should know (also in docs/migrating-from-saturn.md):
 * - Saturn runs each shard's item parameter as that shard's command line. The import keeps the
 *   parameters as Orrery item parameters and sets the command to `eval "$ORRERY_SHARD_PARAM"`,
 *   which runs them the same way; a shard with no parameter then runs nothing.
 * - Jobs are imported **disabled**, whatever they were in Saturn: two schedulers must never run the
 *   same job. Enable each once Saturn's copy is disabled.
 */
import { JOB_NAME_PATTERN, OrreryError, parseItemParameters, type ValidationIssue } from '@orrery/core';

/** The Orrery command of an imported Saturn shell job: its item parameter is its command line. */
export const SATURN_SHELL_COMMAND = 'eval "$ORRERY_SHARD_PARAM"';

/** One Saturn job the import cannot carry over at all. */
export interface SaturnRefusal {
  /** The Saturn job's name (or its position in the file when it has none). */
  job: string;
  reason: string;
}

/** A Saturn field not carried over, or carried over changed. */
export interface SaturnNote {
  job: string;
  field: string;
  note: string;
}

export interface SaturnImport {
  /** The job document for `validateJobDocument`. */
  document: { jobs: Array<Record<string, unknown>> };
  refused: SaturnRefusal[];
  notes: SaturnNote[];
}

/** Saturn's job types Orrery runs, and what each becomes. */
const SHELL_TYPES: Record<string, { passive: boolean }> = { SHELL_JOB: { passive: false }, PASSIVE_SHELL_JOB: { passive: true } };

/** Why a job type other than the shell ones is refused. */
const TYPE_REASONS: Record<string, string> = {
  JAVA_JOB: "a Java job runs a Java class inside Saturn's Java executor; Orrery runs shell and Node jobs — run the program from a shell job, or port it to a Node job",
  PASSIVE_JAVA_JOB: "a passive Java job runs a Java class inside Saturn's Java executor; Orrery runs shell and Node jobs — run the program from a shell job, or port it to a Node job",
  MSG_JOB: 'a message job consumes a message queue; Orrery has no message jobs',
  VSHELL: "a VSHELL job is Saturn's Java-executor shell; import it as SHELL_JOB after checking its command",
};

/** Saturn fields with no Orrery counterpart, and why. */
const NOT_CARRIED: Record<string, string> = {
  rerun: 'Orrery re-runs a crashed fire through failover, and a missed fire follows the misfire policy',
  timeout4AlarmSeconds: 'Orrery alarms when timeoutSeconds stops a run (alarm.onTimeout), not at a separate threshold',
  showNormalLog: "Orrery keeps every run's output on its executor (orrery logs JOB RUN)",
  processCountIntervalSeconds: 'Orrery counts runs in its metrics continuously',
  enabledReport: 'Orrery reports every run to ZooKeeper (one write per run)',
  jobDegree: 'Orrery has no job importance levels; use groups to sort jobs',
  dependencies: 'Orrery has no dependency list; use downstream on the upstream job',
  jobClass: 'Java classes do not run in Orrery',
  queueName: 'Orrery has no message jobs',
  channelName: 'Orrery has no message jobs',
  onlyUsePreferList: 'use useDispreferList (false: only the preferred executors)',
  failoverTimeout: 'Orrery fails a crashed run over as soon as its session ends',
  customContext: 'Orrery has no custom context; use jobParameter',
  isCopyJob: 'no counterpart',
  perferList: "Saturn's old spelling of preferList: check the list and set preferList",
};

/** Fields carried over as they are (Saturn's name → Orrery's), with the value's conversion. */
const CARRIED: Record<string, { to: string; convert: 'string' | 'integer' | 'boolean' | 'list' }> = {
  cron: { to: 'cron', convert: 'string' },
  description: { to: 'description', convert: 'string' },
  jobParameter: { to: 'jobParameter', convert: 'string' },
  timeZone: { to: 'timeZone', convert: 'string' },
  shardingTotalCount: { to: 'shardingTotalCount', convert: 'integer' },
  loadLevel: { to: 'loadLevel', convert: 'integer' },
  timeoutSeconds: { to: 'timeoutSeconds', convert: 'integer' },
  preferList: { to: 'preferList', convert: 'list' },
  useDispreferList: { to: 'useDispreferList', convert: 'boolean' },
  localMode: { to: 'localMode', convert: 'boolean' },
  failover: { to: 'failover', convert: 'boolean' },
  pausePeriodDate: { to: 'pausePeriodDate', convert: 'string' },
  pausePeriodTime: { to: 'pausePeriodTime', convert: 'string' },
  downStream: { to: 'downstream', convert: 'list' },
  groups: { to: 'groups', convert: 'list' },
};

/** Fields read above for their own rules. */
const HANDLED = new Set(['jobName', 'jobType', 'shardingItemParameters', 'enabled', ...Object.keys(CARRIED)]);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `value` converted as `how`, or undefined (a note says why) when it cannot be. */
function convert(value: unknown, how: 'string' | 'integer' | 'boolean' | 'list'): unknown {
  switch (how) {
    case 'string':
      return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
    case 'integer': {
      const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
      return typeof n === 'number' && Number.isInteger(n) ? n : undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? value : value === 'true' ? true : value === 'false' ? false : undefined;
    case 'list':
      // Saturn keeps lists as comma-separated strings; a JSON list is taken as it is.
      if (Array.isArray(value)) return value.every((v) => typeof v === 'string') ? value.map((v) => v.trim()).filter(Boolean) : undefined;
      return typeof value === 'string' ? value.split(',').map((v) => v.trim()).filter(Boolean) : undefined;
  }
}

/** The list of Saturn job configs in an export, or a problem. */
function jobsOf(exported: unknown): unknown[] | string {
  if (Array.isArray(exported)) return exported;
  if (isObject(exported)) {
    for (const key of ['jobs', 'data']) if (Array.isArray(exported[key])) return exported[key] as unknown[];
  }
  return "the file must hold a JSON list of Saturn job configs (or an object with one under 'jobs' or 'data')";
}

/** Saturn job configs → an Orrery job document, with what could not be carried over. */
export function fromSaturnExport(exported: unknown): SaturnImport {
  const list = jobsOf(exported);
  if (typeof list === 'string') throw new OrreryError('validation', list, { details: { issues: [{ field: '', rule: 'type', message: list }] } });
  const jobs: Array<Record<string, unknown>> = [];
  const refused: SaturnRefusal[] = [];
  const notes: SaturnNote[] = [];
  list.forEach((raw, index) => {
    if (!isObject(raw)) {
      refused.push({ job: `#${index + 1}`, reason: 'not an object' });
      return;
    }
    const name = typeof raw.jobName === 'string' ? raw.jobName : undefined;
    const job = name ?? `#${index + 1}`;
    if (name === undefined) {
      refused.push({ job, reason: 'no jobName' });
      return;
    }
    if (!JOB_NAME_PATTERN.test(name)) {
      refused.push({ job, reason: 'Orrery job names are letters, digits, _ and -, 1 to 64: rename it in the file first' });
      return;
    }
    const type = typeof raw.jobType === 'string' ? raw.jobType : '';
    const shell = SHELL_TYPES[type];
    if (!shell) {
      refused.push({ job, reason: TYPE_REASONS[type] ?? `jobType '${type || '(none)'}' is not one Orrery can import (SHELL_JOB, PASSIVE_SHELL_JOB)` });
      return;
    }
    const out: Record<string, unknown> = { name, type: 'shell', enabled: false };
    for (const [field, value] of Object.entries(raw)) {
      if (HANDLED.has(field) || value === null || value === undefined || value === '') continue;
      notes.push({ job, field, note: `not carried over: ${NOT_CARRIED[field] ?? 'no counterpart in Orrery'}` });
    }
    for (const [from, { to, convert: how }] of Object.entries(CARRIED)) {
      const value = raw[from];
      if (value === undefined || value === null || (value === '' && how !== 'string')) continue;
      const converted = convert(value, how);
      if (converted === undefined) {
        notes.push({ job, field: from, note: `not carried over: ${JSON.stringify(value)} is not a ${how}` });
        continue;
      }
      out[to] = converted;
    }
    if (shell.passive) {
      if (typeof out.cron === 'string' && out.cron.trim() !== '') notes.push({ job, field: 'cron', note: 'not carried over: a passive job runs only when triggered (run-now, downstream)' });
      delete out.cron;
    }
    // The item parameters are the shards' command lines.
    const itemParameters = typeof raw.shardingItemParameters === 'string' ? raw.shardingItemParameters : '';
    const issues: ValidationIssue[] = [];
    const parameters = parseItemParameters(itemParameters, issues);
    for (const problem of issues) notes.push({ job, field: 'shardingItemParameters', note: `not carried over: ${problem.message}` });
    out.shardingItemParameters = issues.length > 0 ? {} : parameters;
    out.command = SATURN_SHELL_COMMAND;
    const total = typeof out.shardingTotalCount === 'number' ? out.shardingTotalCount : 1;
    const missing = Array.from({ length: Math.min(total, 10_000) }, (_, i) => String(i)).filter((i) => !(i in parameters));
    notes.push({ job, field: 'shardingItemParameters', note: `each item's parameter is its command line: command set to ${SATURN_SHELL_COMMAND}${missing.length > 0 ? `; item(s) ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', …' : ''} have none and will run nothing` : ''}` });
    if (raw.enabled === true || raw.enabled === 'true') notes.push({ job, field: 'enabled', note: 'imported disabled: enable it here once Saturn no longer runs it' });
    jobs.push(out);
  });
  return { document: { jobs }, refused, notes };
}
