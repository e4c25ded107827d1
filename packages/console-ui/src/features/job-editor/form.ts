/**
 * The job editor's form model (pure): the form's values (text as typed, so a half-typed number is
 * kept, not lost), the JobConfig input they make, and where each validation issue shows. The rules
 * are core's: the input goes through `checkJobConfig` — the checker the server runs — and its issues
 * are shown as they are. Nothing here restates a rule of the schema.
 */
import { JobConfigSchema, checkJobConfig, withDefaults, type JobConfig } from '@orrery/core/schemas';
import type { ApiIssue } from '../../api/client';

/** The editor's sections, in order. */
export const SECTIONS = ['basics', 'schedule', 'sharding', 'placement', 'policies', 'advanced'] as const;
export type Section = (typeof SECTIONS)[number];

/** How a field is edited. */
export type FieldKind = 'text' | 'textarea' | 'code' | 'number' | 'checkbox' | 'select' | 'list' | 'itemParameters';

/** One field of the form: its config path (the `field` of the checker's issues), section and control. */
export interface FieldSpec {
  path: FieldPath;
  section: Section;
  kind: FieldKind;
  /** A select's values. */
  options?: readonly string[];
}

/** Every field of the form, by section, in display order. */
export const FIELDS = [
  { path: 'name', section: 'basics', kind: 'text' },
  { path: 'type', section: 'basics', kind: 'select', options: ['shell', 'node'] },
  { path: 'command', section: 'basics', kind: 'code' },
  { path: 'handler', section: 'basics', kind: 'text' },
  { path: 'description', section: 'basics', kind: 'textarea' },
  { path: 'groups', section: 'basics', kind: 'list' },
  { path: 'enabled', section: 'basics', kind: 'checkbox' },
  { path: 'cron', section: 'schedule', kind: 'text' },
  { path: 'timeZone', section: 'schedule', kind: 'text' },
  { path: 'pausePeriodDate', section: 'schedule', kind: 'text' },
  { path: 'pausePeriodTime', section: 'schedule', kind: 'text' },
  { path: 'shardingTotalCount', section: 'sharding', kind: 'number' },
  { path: 'shardingItemParameters', section: 'sharding', kind: 'itemParameters' },
  { path: 'jobParameter', section: 'sharding', kind: 'textarea' },
  { path: 'localMode', section: 'sharding', kind: 'checkbox' },
  { path: 'loadLevel', section: 'placement', kind: 'number' },
  { path: 'preferList', section: 'placement', kind: 'list' },
  { path: 'useDispreferList', section: 'placement', kind: 'checkbox' },
  { path: 'overlap', section: 'policies', kind: 'select', options: ['skip', 'queue', 'replace'] },
  { path: 'misfire.policy', section: 'policies', kind: 'select', options: ['fire-once', 'skip'] },
  { path: 'misfire.thresholdSeconds', section: 'policies', kind: 'number' },
  { path: 'retry.count', section: 'policies', kind: 'number' },
  { path: 'retry.backoffSeconds', section: 'policies', kind: 'number' },
  { path: 'timeoutSeconds', section: 'policies', kind: 'number' },
  { path: 'failover', section: 'policies', kind: 'select', options: ['default', 'on', 'off'] },
  { path: 'downstream', section: 'advanced', kind: 'list' },
  { path: 'alarm.webhook', section: 'advanced', kind: 'text' },
  { path: 'alarm.onFailure', section: 'advanced', kind: 'checkbox' },
  { path: 'alarm.onTimeout', section: 'advanced', kind: 'checkbox' },
] as const satisfies ReadonlyArray<{ path: string; section: Section; kind: FieldKind; options?: readonly string[] }>;

export type FieldPath = (typeof FIELDS)[number]['path'];
type PathOfKind<K extends FieldKind> = Extract<(typeof FIELDS)[number], { kind: K }>['path'];
export type BooleanPath = PathOfKind<'checkbox'>;
export type TextPath = Exclude<FieldPath, BooleanPath | 'shardingItemParameters'>;

// Every field of the schema has a control (a field added to JobConfig is a type error here until it gets one).
type TopLevel<P extends string> = P extends `${infer Head}.${string}` ? Head : P;
type Uncovered = Exclude<keyof JobConfig, TopLevel<FieldPath>>;
const everyFieldCovered: [Uncovered] extends [never] ? true : ['no control for', Uncovered] = true;
void everyFieldCovered;

/** One row of the item parameters: an item number and its parameter, as typed. */
export interface ItemParameterRow {
  /** A stable key for React (rows move when one is removed). */
  key: number;
  item: string;
  value: string;
}

/** The form's values. */
export interface JobForm {
  text: Record<TextPath, string>;
  flags: Record<BooleanPath, boolean>;
  itemParameters: ItemParameterRow[];
}

let rowKeys = 0;
/** A new item parameter row. */
export function itemRow(item = '', value = ''): ItemParameterRow {
  rowKeys += 1;
  return { key: rowKeys, item, value };
}

/** Reads a dotted path of an object. */
function at(value: unknown, path: string): unknown {
  let cursor = value;
  for (const part of path.split('.')) cursor = typeof cursor === 'object' && cursor !== null ? (cursor as Record<string, unknown>)[part] : undefined;
  return cursor;
}

/** A config's form (pure). A failover left to its default shows as "default". */
export function formFromConfig(config: Partial<JobConfig> & Pick<JobConfig, 'name' | 'type'>): JobForm {
  const text = {} as Record<TextPath, string>;
  const flags = {} as Record<BooleanPath, boolean>;
  for (const field of FIELDS) {
    const value = at(config, field.path);
    if (field.kind === 'checkbox') flags[field.path] = value === true;
    else if (field.kind === 'list') text[field.path] = Array.isArray(value) ? value.join('\n') : '';
    else if (field.path === 'failover') text.failover = value === true ? 'on' : value === false ? 'off' : 'default';
    else if (field.kind !== 'itemParameters') text[field.path] = value === undefined || value === null ? '' : String(value);
  }
  const params = config.shardingItemParameters ?? {};
  const itemParameters = Object.keys(params)
    .sort((a, b) => Number(a) - Number(b) || a.localeCompare(b))
    .map((item) => itemRow(item, params[item]));
  return { text, flags, itemParameters };
}

/** A new job's form: the schema's own defaults (a shell job, disabled, one shard, UTC…). */
export function newJobForm(): JobForm {
  return formFromConfig(withDefaults(JobConfigSchema, { name: '', type: 'shell' }) as JobConfig);
}

/** A number as typed: the number when it reads as one, else the text (the schema then names the problem). */
function numberOrText(text: string): number | string {
  const trimmed = text.trim();
  return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(trimmed) ? Number(trimmed) : trimmed;
}

/** One entry per line (blank lines and surrounding spaces dropped). */
export function listFromText(text: string): string[] {
  return text.split('\n').map((s) => s.trim()).filter((s) => s !== '');
}

/**
 * The JobConfig input the form makes (pure): what is sent to the API and checked by core. Only
 * the type's own field of command / handler is sent; an empty cron is a passive job; an empty
 * webhook is none; failover "default" is left to core (on, off in local mode).
 */
export function inputFromForm(form: JobForm): Record<string, unknown> {
  const { text, flags } = form;
  const params: Record<string, string> = {};
  for (const row of form.itemParameters) {
    if (row.item.trim() === '' && row.value === '') continue;
    params[row.item.trim()] = row.value;
  }
  const input: Record<string, unknown> = {
    name: text.name.trim(),
    description: text.description,
    type: text.type,
  };
  if (text.type === 'shell' && text.command !== '') input.command = text.command;
  if (text.type !== 'shell' && text.handler.trim() !== '') input.handler = text.handler.trim();
  if (text.cron.trim() !== '') input.cron = text.cron.trim();
  Object.assign(input, {
    timeZone: text.timeZone.trim(),
    shardingTotalCount: numberOrText(text.shardingTotalCount),
    shardingItemParameters: params,
    jobParameter: text.jobParameter,
    localMode: flags.localMode,
    loadLevel: numberOrText(text.loadLevel),
    preferList: listFromText(text.preferList),
    useDispreferList: flags.useDispreferList,
    timeoutSeconds: numberOrText(text.timeoutSeconds),
    enabled: flags.enabled,
    pausePeriodDate: text.pausePeriodDate.trim(),
    pausePeriodTime: text.pausePeriodTime.trim(),
    overlap: text.overlap,
    misfire: { policy: text['misfire.policy'], thresholdSeconds: numberOrText(text['misfire.thresholdSeconds']) },
    retry: { count: numberOrText(text['retry.count']), backoffSeconds: numberOrText(text['retry.backoffSeconds']) },
    downstream: listFromText(text.downstream),
    groups: listFromText(text.groups),
    alarm: { ...(text['alarm.webhook'].trim() !== '' ? { webhook: text['alarm.webhook'].trim() } : {}), onFailure: flags['alarm.onFailure'], onTimeout: flags['alarm.onTimeout'] },
  });
  if (text.failover !== 'default') input.failover = text.failover === 'on';
  return input;
}

/** The form checked by core's `checkJobConfig`: the normalised config, or every issue. */
export function checkForm(form: JobForm): ReturnType<typeof checkJobConfig> {
  return checkJobConfig(inputFromForm(form));
}

/** True when `issue` is about `path` or something under it (`preferList[2]`, `shardingItemParameters.3`). */
export function issueIsAt(issue: ApiIssue, path: string): boolean {
  return issue.field === path || issue.field.startsWith(`${path}.`) || issue.field.startsWith(`${path}[`);
}

/** The field whose control shows `issue`, or undefined for an issue about the whole config. */
export function fieldOfIssue(issue: ApiIssue): FieldPath | undefined {
  // The most specific path first (`misfire.policy` before a `misfire` whole-object issue).
  const paths = FIELDS.map((f) => f.path as string).sort((a, b) => b.length - a.length);
  const exact = paths.find((p) => issueIsAt(issue, p));
  if (exact) return exact as FieldPath;
  // An issue about a whole object (`misfire`, `retry`, `alarm`) shows at its first field.
  return FIELDS.find((f) => f.path.startsWith(`${issue.field}.`))?.path;
}

/** A server issue as the form names it: a PUT's `config.cron` is the form's `cron` (pure). */
export function formIssue(issue: ApiIssue): ApiIssue {
  if (issue.field !== 'config' && !issue.field.startsWith('config.') && !issue.field.startsWith('config[')) return issue;
  const field = issue.field.replace(/^config\.?/, '');
  return { ...issue, field, message: issue.message.replace(/^config\.?/, '') };
}

/** The checker's sentence without its leading `field: ` (the form shows it under the field) (pure). */
export function issueDetail(issue: ApiIssue): string {
  const prefix = `${issue.field || 'value'}: `;
  return issue.message.startsWith(prefix) ? issue.message.slice(prefix.length) : issue.message;
}

/** The item of a `shardingItemParameters.<item>` issue (pure). */
export function itemOfIssue(issue: ApiIssue): string | undefined {
  return issue.field.startsWith('shardingItemParameters.') ? issue.field.slice('shardingItemParameters.'.length) : undefined;
}
