/**
 * Run alarms: on a `failed` or `timed-out` outcome (with the job's `alarm.onFailure` /
 * `alarm.onTimeout`), an alarm to the job's `alarm.webhook`, else the namespace's. The job leader's
 * `failover` events (a crashed run marked for a re-run) go to the namespace's webhook. Sending —
 * timeout, retries, at most one alarm per job and kind per the namespace's silence window, the
 * bounded queue — is core's alarm sender's (`alarm-sender.ts`), with the namespace's `alarm` policy.
 *
 * A run alarm carries the outcome's short message (the same as the shard node in ZooKeeper: at most
 * `SHARD_MESSAGE_MAX_BYTES`, for a failure the last line of stderr), never the run's output: a
 * webhook is often a third party's (a chat, a pager), and the output may hold anything the job
 * printed. The full output stays on the executor (`GET /runs/:runId/log`, with the cluster token).
 */
import { alarmKey, alarmPolicy, checkNamespaceInfo, decodeJson, paths, toError, type AlarmPolicy, type AlarmSender, type JobConfig, type Logger, type ShardOutcome, type ZkClient } from '@orrery/core';

export interface RunAlarms {
  runFailed(config: JobConfig, item: number, outcome: ShardOutcome): void;
  /** An event of a job (failover), to the namespace's webhook. */
  jobEvent(kind: 'failover', job: string, body: Record<string, unknown>): void;
}

export interface RunAlarmOptions {
  zk: ZkClient;
  namespace: string;
  executor: string;
  logger: Logger;
  /** The process's alarm sender (owned by the caller, which closes it). */
  sender: AlarmSender;
  /** Called when an alarm was delivered (the webhook answered 2xx). */
  onSent?: (job: string, kind: string) => void;
  /** Epoch ms of an alarm's `at`. Default `Date.now`. */
  now?: () => number;
}

export function createRunAlarms(options: RunAlarmOptions): RunAlarms {
  const { logger, sender, namespace } = options;
  const now = options.now ?? Date.now;

  /** The namespace's webhook (unless the job has its own) and alarm policy; read per alarm so edits apply at once. */
  async function settings(jobWebhook: string | undefined): Promise<{ webhook: string; policy: AlarmPolicy } | undefined> {
    const path = paths.namespace(namespace);
    const { data } = await options.zk.get(path);
    const ns = checkNamespaceInfo(decodeJson(data, path));
    const webhook = jobWebhook ?? (ns.ok ? ns.value.alarm.webhook : undefined);
    if (!webhook) return undefined;
    return { webhook, policy: alarmPolicy(ns.ok ? ns.value.alarm : undefined) };
  }

  function send(job: string, kind: string, jobWebhook: string | undefined, body: (at: string) => Record<string, unknown>, fields: Record<string, unknown>): void {
    settings(jobWebhook).then((s) => {
      if (!s) return;
      const result = sender.send(alarmKey(namespace, kind, job), s.webhook, body(new Date(now()).toISOString()), {
        ...s.policy,
        onDelivered: () => {
          logger.warn({ job, kind, ...fields }, 'alarm sent');
          options.onSent?.(job, kind);
        },
      });
      if (result === 'silenced') logger.debug({ job, kind, ...fields }, 'alarm silenced (one per job and kind per silence window)');
    }).catch((error: unknown) => logger.error({ err: toError(error), job, kind }, 'alarm not sent: the namespace settings could not be read'));
  }

  return {
    jobEvent(kind, job, body) {
      send(job, kind, undefined, (at) => ({ kind, namespace, job, executor: options.executor, ...body, at }), {});
    },
    runFailed(config, item, outcome) {
      const kind = outcome.status === 'timed-out' ? 'run-timed-out' : 'run-failed';
      if (kind === 'run-failed' && !config.alarm.onFailure) return;
      if (kind === 'run-timed-out' && !config.alarm.onTimeout) return;
      send(config.name, kind, config.alarm.webhook, (at) => ({
        kind,
        namespace,
        job: config.name,
        item,
        executor: options.executor,
        status: outcome.status,
        exitCode: outcome.exitCode,
        message: outcome.message,
        fireTime: new Date(outcome.fireTime).toISOString(),
        runId: outcome.runId,
        at,
      }), { item });
    },
  };
}
