/**
 * Command: the data of a job's command node (`paths.jobCommand`) — a request to the owners of the
 * job's shards (run now, stop) or to its leader (repair), or from its leader (failover). Browser-safe.
 *
 * Four writers share this one schema: the CLI and the console (`run`, `stop`, sequential names
 * `cmd-<seq>`), an upstream job's executor (`run` named `downstream-<job>-<fireTime>`), the job
 * leader (`failover-<item>-<fireTime>`) and an item's owner (`repair-<item>`). Writers check a
 * command before they write it; the executor reads each node once, checks it with
 * {@link checkCommandNode} and skips (logs and counts) what does not pass.
 *
 * Guarantees: a command that passes names only integer items within the shard range, times as epoch
 * ms, and nothing else (unknown fields are refused). Not guaranteed: that the items exist in the
 * job's current config, or that anyone owns them — the reader filters by what it runs.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { validationError } from '../errors.js';
import { JOB_NAME_PATTERN, parseCommandName, type CommandNameParts } from '../layout.js';
import { checkWith, issue, isPlainObject, type CheckResult } from './validate.js';

/** The most items one command names (the most shards a job may have). */
export const COMMAND_MAX_ITEMS = 10_000;
/** The longest `param` a run command carries (the same as a job's `jobParameter`). */
export const COMMAND_PARAM_MAX_LENGTH = 65_536;
/** The longest `requestedBy` (a user or token name for the audit). */
export const COMMAND_REQUESTED_BY_MAX_LENGTH = 256;

/** Every kind of command, as `kind` holds it. */
export const COMMAND_KINDS = ['run', 'stop', 'failover', 'repair'] as const;
/** The kind of a command. */
export type CommandKind = (typeof COMMAND_KINDS)[number];

const Item = Type.Integer({ minimum: 0, maximum: 99_999 });
const Items = Type.Array(Item, { minItems: 1, maxItems: COMMAND_MAX_ITEMS, uniqueItems: true });
/** Epoch ms. */
const EpochMs = Type.Integer({ minimum: 0 });

/** Fields every command has. */
const common = {
  /** When it was requested, epoch ms. Readers ignore commands from well before they started. */
  requestedAt: EpochMs,
  /** Who asked (a user or token name), for the audit; absent from executors' own commands. */
  requestedBy: Type.Optional(Type.String({ minLength: 1, maxLength: COMMAND_REQUESTED_BY_MAX_LENGTH })),
};

/** Run the items now (default: every item an owner runs); `param` overrides the job parameter. */
export const RunCommandSchema = Type.Object(
  {
    kind: Type.Literal('run'),
    items: Type.Optional(Items),
    param: Type.Optional(Type.String({ maxLength: COMMAND_PARAM_MAX_LENGTH })),
    /** The fire time the runs belong to (a downstream run: the upstream's); default `requestedAt`. */
    fireTime: Type.Optional(EpochMs),
    /** The upstream job whose fire completed (downstream runs). */
    triggeredBy: Type.Optional(Type.String({ pattern: JOB_NAME_PATTERN.source })),
    ...common,
  },
  { additionalProperties: false },
);
/** Stop the items' runs in progress (default: every item an owner runs). */
export const StopCommandSchema = Type.Object({ kind: Type.Literal('stop'), items: Type.Optional(Items), ...common }, { additionalProperties: false });
/** From the job leader: the items' crashed run of `fireTime` waits for its owner's failover re-run. */
export const FailoverCommandSchema = Type.Object({ kind: Type.Literal('failover'), items: Items, fireTime: EpochMs, ...common }, { additionalProperties: false });
/** To the job leader: the items' shard nodes hold data their owner cannot read; reset them. */
export const RepairCommandSchema = Type.Object({ kind: Type.Literal('repair'), items: Items, ...common }, { additionalProperties: false });

/** A command node's data: a union discriminated by `kind`. */
export const CommandSchema = Type.Union([RunCommandSchema, StopCommandSchema, FailoverCommandSchema, RepairCommandSchema]);
/** A command node's data. */
export type Command = Static<typeof CommandSchema>;
/** A command of one kind. */
export type CommandOf<K extends CommandKind> = Extract<Command, { kind: K }>;

const SCHEMA_OF: Record<CommandKind, TSchema> = {
  run: RunCommandSchema,
  stop: StopCommandSchema,
  failover: FailoverCommandSchema,
  repair: RepairCommandSchema,
};

const isKind = (value: unknown): value is CommandKind => typeof value === 'string' && (COMMAND_KINDS as readonly string[]).includes(value);

/**
 * Checks a command: `kind` first, then the fields of that kind, so each issue names the field and
 * the rule of the kind the writer meant (not "matches none of four schemas").
 */
export function checkCommand(input: unknown): CheckResult<Command> {
  if (!isPlainObject(input)) return { ok: false, issues: [issue('', 'type', 'a command must be an object')] };
  if (!isKind(input.kind)) {
    const got = input.kind === undefined ? 'nothing' : JSON.stringify(input.kind);
    return { ok: false, issues: [issue('kind', input.kind === undefined ? 'required' : 'one-of', `must be ${COMMAND_KINDS.slice(0, -1).map((k) => `"${k}"`).join(', ')} or "${COMMAND_KINDS.at(-1)}" (got ${got})`)] };
  }
  return checkWith<Command>(SCHEMA_OF[input.kind], input, `${input.kind} command`);
}

/** A command, or a `validation` error listing every issue. */
export function parseCommand(input: unknown): Command {
  const r = checkCommand(input);
  if (!r.ok) throw validationError(r.issues, 'command');
  return r.value;
}

/** Which kinds a node of each name form may hold. */
const KINDS_OF_FORM: Record<CommandNameParts['form'], readonly CommandKind[]> = {
  sequential: ['run', 'stop'],
  downstream: ['run'],
  failover: ['failover'],
  repair: ['repair'],
};

/** A command node as read: its parsed name and its data. */
export interface CommandNode {
  name: CommandNameParts;
  command: Command;
}

/**
 * Checks a command node: its name is of a known form ({@link parseCommandName}), its data a valid
 * command of a kind that name form holds, and a fire time in the name is the one in the data.
 * Issues name `name` for the node name, else the data's field.
 */
export function checkCommandNode(name: string, input: unknown): CheckResult<CommandNode> {
  const parts = parseCommandName(name);
  if (!parts) {
    return { ok: false, issues: [issue('name', 'form', `'${name}' is of no known form (cmd-<seq>, downstream-<job>-<fireTime>, failover-<item>-<fireTime>, repair-<item>)`)] };
  }
  const checked = checkCommand(input);
  if (!checked.ok) return checked;
  const command = checked.value;
  const kinds = KINDS_OF_FORM[parts.form];
  if (!kinds.includes(command.kind)) {
    return { ok: false, issues: [issue('kind', 'name-form', `a ${parts.form} node (${name}) holds ${kinds.map((k) => `"${k}"`).join(' or ')} commands, not "${command.kind}"`)] };
  }
  if ((parts.form === 'downstream' || parts.form === 'failover') && 'fireTime' in command && command.fireTime !== parts.fireTime) {
    return { ok: false, issues: [issue('fireTime', 'name-form', `must be the fire time its name carries (${parts.fireTime}), not ${String(command.fireTime)}`)] };
  }
  if (parts.form === 'downstream' && command.kind === 'run' && command.fireTime === undefined) {
    return { ok: false, issues: [issue('fireTime', 'required', `a downstream run carries the upstream fire time (${parts.fireTime})`)] };
  }
  return { ok: true, value: { name: parts, command } };
}
