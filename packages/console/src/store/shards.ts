/**
 * What each item (shard) of a job is doing: its state, owner, the run in progress, the last outcome,
 * the next fire time, and for an item the allocator could not place, why and what to do. One pure
 * rule ({@link describeShards}) over the job's nodes, read either from ZooKeeper ({@link listShards},
 * the CLI's `get shards`) or from the console's cache (the API's shards route).
 *
 * What it guarantees: a broken node (job config, assignment, shard) is shown with its `problem`,
 * never thrown; the state is one of {@link SHARD_ITEM_STATES}, decided in this order: a claim in
 * progress (`running`), an item the allocator left unassigned (`unassigned`), the last outcome's
 * status, else `never-run`.
 *
 * Not guaranteed: a consistent snapshot — the nodes are read one by one, so a run that ends while
 * they are read may show its old state.
 */
import {
  OrreryError,
  checkAssignment,
  checkJobConfig,
  checkShardState,
  createSchedule,
  hasErrorCode,
  inspectNode,
  paths,
  wallAsUtc,
  wallTime,
  zoneOffset,
  type Assignment,
  type JobConfig,
  type ShardState,
  type UnassignedReason,
  type ZkClient,
} from '@orrery/core';

/** The states an item is shown in. */
export const SHARD_ITEM_STATES = ['running', 'succeeded', 'failed', 'timed-out', 'aborted', 'never-run', 'unassigned'] as const;
/** The state of one item, as shown. */
export type ShardItemState = (typeof SHARD_ITEM_STATES)[number];

/** An instant shown in the job's zone and in UTC. */
export interface ZonedTime {
  /** Epoch ms. */
  at: number;
  /** ISO 8601 with the zone's offset at that instant, e.g. `2025-03-30T03:00:00+02:00`. */
  local: string;
  /** ISO 8601 in UTC (`…Z`). */
  utc: string;
  /** The IANA zone of `local`. */
  timeZone: string;
}

/** How the last run of an item ended (from its shard node). */
export interface ShardLastOutcome {
  status: 'succeeded' | 'failed' | 'timed-out' | 'aborted';
  message: string;
  runId: string;
  executor: string;
  /** Epoch ms. */
  startedAt: number;
  endedAt: number;
  durationMs: number;
  exitCode: number | null;
}

/** One item of a job, as the CLI and the API show it. */
export interface ShardView {
  item: number;
  state: ShardItemState;
  /** The executor the allocator assigned it to (null: none). */
  owner: string | null;
  /** The run in progress: its id, the executor running it (may differ from the owner while a reassignment settles), since when (epoch ms). */
  running: { runId: string; executor: string; since: number; attempt: number } | null;
  /** A crashed run waiting for its failover re-run (the job leader marked it). */
  failoverPending: { runId: string; executor: string; markedAt: number } | null;
  last: ShardLastOutcome | null;
  /** The job's next fire time (null: disabled, passive, or no fire within 5 years). The same for every item. */
  nextFire: ZonedTime | null;
  /** Why the allocator left it unassigned, and a sentence of what to do (present when `state` is `unassigned`). */
  unassigned?: { reason: UnassignedReason; advice: string };
  /** What is wrong with its shard node, if it is unreadable. */
  problem?: string;
}

/** A job's items. */
export interface ShardsView {
  job: string;
  enabled: boolean;
  timeZone: string;
  shardingTotalCount: number;
  /** The assignment's epoch (null: the allocator has not written one yet). */
  assignmentEpoch: number | null;
  items: ShardView[];
  /** What is wrong with the assignment node, if anything. */
  assignmentProblem?: string;
}

/** A shard node as read: its state, or what is wrong with it. */
export type ShardReading = { ok: true; value: ShardState } | { ok: false; problem: string };

/** What {@link describeShards} is computed from. */
export interface ShardInputs {
  namespace: string;
  config: JobConfig;
  assignment: { ok: true; value: Assignment } | { ok: false; problem: string } | undefined;
  /** Item → its shard node (absent: never claimed). */
  shards: ReadonlyMap<number, ShardReading>;
  /** Epoch ms. */
  now: number;
}

/** An instant in `timeZone` and UTC (pure). */
export function zonedTime(at: number, timeZone: string): ZonedTime {
  const wall = new Date(wallAsUtc(wallTime(at, timeZone))).toISOString().slice(0, 19);
  const offsetMinutes = Math.round(zoneOffset(at, timeZone) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return { at, local: `${wall}${offset}`, utc: new Date(at).toISOString(), timeZone };
}

/** A sentence saying what to do about an item left unassigned for `reason` (pure). */
export function unassignedAdvice(reason: UnassignedReason, namespace: string, config: Pick<JobConfig, 'handler' | 'preferList' | 'type'>): string {
  switch (reason) {
    case 'no-eligible-executor':
      return `no online executor of namespace '${namespace}' may take it: start an executor in this namespace, or check the job's preferList`;
    case 'no-preferred-executor-online':
      return `none of the job's preferred executors (${config.preferList.join(', ') || 'preferList'}) is online and useDispreferList is false: start one of them, or set useDispreferList: true`;
    case 'no-executor-has-handler':
      return `no online executor offers the Node handler '${config.handler ?? '?'}': start an executor whose --jobs folder holds it`;
    case 'all-drained':
      return `every eligible executor is drained: undrain one (orrery -n ${namespace} undrain EXECUTOR) or start another`;
  }
}

/** The items of a job from its nodes (pure); see the module header for the state rule. */
export function describeShards(input: ShardInputs): ShardsView {
  const { config, assignment, shards, namespace } = input;
  const owners = new Map<number, string>();
  const unassigned = new Map<number, UnassignedReason>();
  if (assignment?.ok) {
    for (const [executor, items] of Object.entries(assignment.value.items)) for (const item of items) owners.set(item, executor);
    for (const u of assignment.value.unassigned) unassigned.set(u.item, u.reason);
  }
  let nextFire: ZonedTime | null = null;
  if (config.enabled && config.cron) {
    try {
      const at = createSchedule({ cron: config.cron, timeZone: config.timeZone, pausePeriodDate: config.pausePeriodDate, pausePeriodTime: config.pausePeriodTime }).next(input.now);
      if (at !== undefined) nextFire = zonedTime(at, config.timeZone);
    } catch {
      // A config that passed the schema compiles; a zone this runtime lacks shows no next fire.
    }
  }
  const itemSet = new Set<number>();
  for (let i = 0; i < config.shardingTotalCount; i += 1) itemSet.add(i);
  // Nodes of items beyond the count (the count was lowered) are shown too: they hold history.
  for (const item of shards.keys()) itemSet.add(item);
  const items = [...itemSet].sort((a, b) => a - b).map((item): ShardView => {
    const reading = shards.get(item);
    const state = reading?.ok ? reading.value : undefined;
    const last = state?.last
      ? { status: state.last.status, message: state.last.message, runId: state.last.runId, executor: state.last.executor, startedAt: state.last.startedAt, endedAt: state.last.endedAt, durationMs: state.last.durationMs, exitCode: state.last.exitCode }
      : null;
    const running = state?.state === 'running' ? { runId: state.runId, executor: state.executor, since: state.startedAt, attempt: state.attempt } : null;
    const failoverPending = state?.state === 'failover' ? { runId: state.runId, executor: state.executor, markedAt: state.markedAt } : null;
    const reason = unassigned.get(item);
    const shown: ShardItemState = running ? 'running' : reason ? 'unassigned' : last ? last.status : 'never-run';
    return {
      item,
      state: shown,
      owner: owners.get(item) ?? null,
      running,
      failoverPending,
      last,
      nextFire: item < config.shardingTotalCount ? nextFire : null,
      ...(reason ? { unassigned: { reason, advice: unassignedAdvice(reason, namespace, config) } } : {}),
      ...(reading && !reading.ok ? { problem: reading.problem } : {}),
    };
  });
  return {
    job: config.name,
    enabled: config.enabled,
    timeZone: config.timeZone,
    shardingTotalCount: config.shardingTotalCount,
    assignmentEpoch: assignment?.ok ? assignment.value.epoch : null,
    items,
    ...(assignment && !assignment.ok ? { assignmentProblem: assignment.problem } : {}),
  };
}

async function getOrUndefined(zk: ZkClient, path: string): Promise<{ data: Buffer | null } | undefined> {
  try {
    return await zk.get(path);
  } catch (error) {
    if (hasErrorCode(error, 'no-node')) return undefined;
    throw error;
  }
}

/**
 * Reads a job's nodes from ZooKeeper and describes its items ({@link describeShards}). Throws
 * `not-found` for a job that does not exist, `bad-data` for a job whose config is unreadable.
 */
export async function listShards(zk: ZkClient, namespace: string, job: string, now: number = Date.now()): Promise<ShardsView> {
  const configNode = await getOrUndefined(zk, paths.job(namespace, job));
  if (!configNode) throw new OrreryError('not-found', `job '${job}' does not exist in namespace '${namespace}'`, { details: { namespace, job } });
  const config = inspectNode(configNode.data, paths.job(namespace, job), checkJobConfig);
  if (!config.ok) throw new OrreryError('bad-data', `job '${job}' cannot be read: its config is ${config.problem}`, { details: { namespace, job } });
  const assignmentNode = await getOrUndefined(zk, paths.jobAssignment(namespace, job));
  const assignmentReading = assignmentNode ? inspectNode(assignmentNode.data, paths.jobAssignment(namespace, job), checkAssignment) : undefined;
  let children: string[] = [];
  try {
    children = await zk.getChildren(paths.jobShards(namespace, job));
  } catch (error) {
    if (!hasErrorCode(error, 'no-node')) throw error;
  }
  const shards = new Map<number, ShardReading>();
  await Promise.all(children.map(async (child) => {
    const item = Number(child);
    if (!Number.isInteger(item) || item < 0 || String(item) !== child) return;
    const node = await getOrUndefined(zk, paths.jobShard(namespace, job, item));
    if (!node) return;
    const reading = inspectNode(node.data, paths.jobShard(namespace, job, item), checkShardState);
    shards.set(item, reading.ok ? { ok: true, value: reading.value } : { ok: false, problem: reading.problem });
  }));
  return describeShards({
    namespace,
    config: config.value,
    assignment: assignmentReading ? (assignmentReading.ok ? { ok: true, value: assignmentReading.value } : { ok: false, problem: assignmentReading.problem }) : undefined,
    shards,
    now,
  });
}
