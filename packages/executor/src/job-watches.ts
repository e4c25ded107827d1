/**
 * The watches of one job on one executor: its config, its `applied` node and its commands.
 *
 * - config: every change is handed on parsed; a node that does not parse keeps the last valid
 *   config (logged); a deleted node hands on `undefined`.
 * - applied: handed on unless it comes from an older allocator epoch than one seen (a deposed
 *   allocator's).
 * - commands: passes run one at a time; each lists the commands (setting the watch again) and reads,
 *   in name order, each one not read before. A command is marked seen only once read: a read that
 *   fails with a retryable error (connection loss) leaves it and the rest unseen, and another pass
 *   runs once connected — a broken link never loses a command. A node that cannot be parsed (not
 *   JSON, not a command, a name of no known form) is logged once, counted and skipped. Commands
 *   requested more than {@link COMMAND_HISTORY_SLACK_MS} before the watches started are history.
 *   While this executor leads the job, each pass prunes commands older than {@link COMMAND_MAX_AGE_MS}.
 *
 * ZooKeeper cost: one watch each on the config, `applied` and the commands folder; one read per
 * new command.
 */
import {
  COMMAND_NODE_PATTERN,
  checkApplied,
  checkCommandNode,
  createSerialTask,
  decodeJson,
  ensureNode,
  errorCode,
  hasErrorCode,
  inspectNode,
  isRetryable,
  parseCommandName,
  parseJobConfig,
  paths,
  readJson,
  toError,
  type Applied,
  type CommandNode,
  type Emitter,
  type JobConfig,
  type Logger,
  type ZkClient,
} from '@orrery/core';
import type { ExecutorEvents } from './executor-events.js';
import type { ExecutorMetrics } from './executor-metrics.js';
import { untilConnected } from './until-connected.js';

/** The job leader deletes command nodes older than this (ms). */
export const COMMAND_MAX_AGE_MS = 60_000;
/** Commands requested this long (ms) before the runtime started are history, not requests. */
export const COMMAND_HISTORY_SLACK_MS = 5000;
/** A command pass that could not read a command (connection loss) runs again this long (ms) after, once connected. */
export const COMMAND_RETRY_MS = 500;
/** Why a command node was skipped (the `reason` label of `orrery_executor_commands_skipped_total`). */
export type CommandSkipReason = 'name' | 'json' | 'invalid' | 'unreadable';

export interface JobWatchesOptions {
  zk: ZkClient;
  namespace: string;
  job: string;
  logger: Logger;
  emitter: Emitter<ExecutorEvents>;
  metrics: ExecutorMetrics;
  /** Commands requested before this (less the slack) are history. */
  startedAt: number;
  /** True while this executor leads the job (it prunes old commands). */
  isLeader(): boolean;
  /** The job's config changed (`undefined`: the job is gone); `changedAt` is the node's mtime. */
  onConfig(config: JobConfig | undefined, changedAt: number): void;
  onApplied(applied: Applied): void;
  onCommand(name: string, command: CommandNode): void;
}

export interface JobWatches {
  /** Sets every watch (again: after a new ZooKeeper session). */
  watchAll(): void;
  /** One more command pass. */
  watchCommands(): void;
  /** Sets no watch from now on. */
  close(): void;
}

export function createJobWatches(options: JobWatchesOptions): JobWatches {
  const { zk, namespace, job, logger, emitter, metrics } = options;
  let closed = false;
  let applied: Applied | undefined;
  const seenCommands = new Set<string>();
  // Assumed there until a listing finds it missing: an existing job's folder costs no write (with
  // three executors holding a job, each making it first was three creates, two of them refused).
  let commandsFolder = true;
  let commandRetry: NodeJS.Timeout | undefined;

  const watchConfig = async (): Promise<void> => {
    if (closed) return;
    try {
      const { data, stat } = await zk.get(paths.job(namespace, job), () => void watchConfig());
      const next = parseJobConfig(decodeJson(data, paths.job(namespace, job)));
      if (!closed) options.onConfig(next, stat.mtime);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'no-node') {
        if (!closed) options.onConfig(undefined, 0);
      } else if (code === 'validation' || code === 'bad-data') logger.error({ err: toError(error) }, 'job config is invalid; keeping the last valid one');
      else if (!isRetryable(error)) emitter.emit('error', toError(error));
    }
  };

  const watchApplied = async (): Promise<void> => {
    if (closed) return;
    const path = paths.jobApplied(namespace, job);
    const watch = (): void => void watchApplied();
    try {
      // One read that sets the watch; a missing node is watched for its creation instead (and read
      // again if it came meanwhile).
      const read = await readJson(zk, path, checkApplied, watch);
      if (!read) {
        if (await zk.exists(path, watch)) void watchApplied();
        return;
      }
      if (closed) return;
      const value = read.value;
      if (applied && value.allocatorEpoch < applied.allocatorEpoch) return; // a deposed allocator's epoch
      applied = value;
      options.onApplied(value);
    } catch (error) {
      if (!isRetryable(error)) {
        logger.error({ err: toError(error) }, 'cannot read the applied assignment');
        emitter.emit('error', toError(error));
      }
    }
  };

  // Command passes run one at a time: two passes never read (and act on) the same node at once.
  const commandPass = createSerialTask(() => readCommands(), () => !closed);
  const watchCommands = (): void => {
    if (!closed) commandPass.trigger();
  };

  async function readCommands(): Promise<void> {
    if (closed) return;
    let retry = false;
    try {
      const names = await listCommands();
      if (!names) return;
      // A name no longer listed was deleted (pruned): forget it, so the set stays small.
      const listed = new Set(names);
      for (const name of seenCommands) if (!listed.has(name)) seenCommands.delete(name);
      const unseen = names.filter((name) => !seenCommands.has(name));
      if (unseen.length > 0) emitter.emit('commands:listed', { job, names: unseen });
      for (const name of unseen) {
        if (closed) return;
        const read = await readCommand(name);
        if (read === 'retry') {
          retry = true;
          break;
        }
        seenCommands.add(name);
        if (read && !closed) options.onCommand(name, read);
      }
      if (options.isLeader()) pruneCommands(names);
    } catch (error) {
      if (isRetryable(error)) retry = true;
      else emitter.emit('error', toError(error));
    }
    if (retry) retryCommandsLater();
  }

  /**
   * Lists the command names (setting the watch), making the commands folder when the listing finds
   * it missing; undefined when the job is gone.
   */
  async function listCommands(): Promise<string[] | undefined> {
    const path = paths.jobCommands(namespace, job);
    for (;;) {
      // Never `mkdirp`: a job someone deleted must stay deleted (see ensureNode).
      if (!commandsFolder) {
        if (!(await ensureNode(zk, path))) return undefined;
        commandsFolder = true;
      }
      try {
        return (await zk.getChildren(path, () => watchCommands())).sort();
      } catch (error) {
        if (!hasErrorCode(error, 'no-node')) throw error;
        // Not made yet, or deleted (by hand, or with the job): made, unless the job is gone. A deleted
        // folder's commands went with it, and a new one numbers sequential names from 0 again:
        // forget the names seen.
        commandsFolder = false;
        seenCommands.clear();
      }
    }
  }

  /**
   * Reads one command node: the parsed node; `undefined` when there is nothing to do (deleted
   * meanwhile, from before this runtime started, or skipped as unparsable); `'retry'` when the read
   * failed with an error a later read may not have.
   */
  async function readCommand(name: string): Promise<CommandNode | undefined | 'retry'> {
    // Only a name of a known form is read: any other is no request of ours.
    if (!parseCommandName(name)) return skipCommand(name, 'name', 'the name is of no known form (cmd-<seq>, downstream-<job>-<fireTime>, failover-<item>-<fireTime>, repair-<item>)');
    const path = paths.jobCommand(namespace, job, name);
    let data: Buffer | null;
    try {
      ({ data } = await zk.get(path));
    } catch (error) {
      if (hasErrorCode(error, 'no-node')) return undefined;
      if (isRetryable(error)) {
        logger.warn({ err: toError(error), node: path }, 'could not read a command; it is read again once connected');
        return 'retry';
      }
      return skipCommand(name, 'unreadable', toError(error).message);
    }
    const checked = inspectNode(data, path, (input) => checkCommandNode(name, input));
    if (!checked.ok) return skipCommand(name, checked.issues[0]?.rule === 'json' ? 'json' : 'invalid', checked.problem);
    // Commands from before this runtime started, by more than a moment, are history.
    if (checked.value.command.requestedAt < options.startedAt - COMMAND_HISTORY_SLACK_MS) return undefined;
    return checked.value;
  }

  /** Logs (once: the node is then seen), counts and reports a command node that cannot be parsed. */
  function skipCommand(name: string, reason: CommandSkipReason, problem: string): undefined {
    const node = COMMAND_NODE_PATTERN.test(name) ? paths.jobCommand(namespace, job, name) : paths.jobCommands(namespace, job);
    logger.warn({ node, name, reason, problem }, 'command skipped: it cannot be parsed');
    metrics.commandsSkipped.inc({ reason });
    emitter.emit('command:skipped', { job, name, reason, problem });
    return undefined;
  }

  /** One more command pass once connected (at most one waits at a time). */
  function retryCommandsLater(): void {
    if (closed || commandRetry) return;
    commandRetry = setTimeout(() => {
      void untilConnected(zk, () => closed).then(() => {
        commandRetry = undefined;
        watchCommands();
      });
    }, COMMAND_RETRY_MS);
    commandRetry.unref();
  }

  function pruneCommands(names: string[]): void {
    for (const name of names) {
      // A name ZooKeeper lists but no path can hold is not Orrery's to delete.
      if (!COMMAND_NODE_PATTERN.test(name)) continue;
      const path = paths.jobCommand(namespace, job, name);
      void zk.exists(path).then((stat) => {
        if (stat && Date.now() - stat.ctime > COMMAND_MAX_AGE_MS) return zk.delete(path, stat.version);
        return undefined;
      }).catch(() => undefined); // best effort: an old command not pruned now is pruned on the next pass
    }
  }

  return {
    watchAll() {
      void watchConfig();
      void watchApplied();
      watchCommands();
    },
    watchCommands,
    close() {
      closed = true;
      if (commandRetry) clearTimeout(commandRetry);
      commandRetry = undefined;
    },
  };
}
