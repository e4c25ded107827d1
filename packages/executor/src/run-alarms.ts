/**
 * Run alarms: on a `failed` or `timed-out` outcome (with the job's `alarm.onFailure` /
 * `alarm.onTimeout`), POST a JSON alarm to the job's `alarm.webhook`, else the namespace's, at most
 * once per job and kind per the namespace's silence window. The job leader's `failover` events
 * (a crashed run marked for a re-run) go to the namespace's webhook the same way.
 *
 * A run alarm carries the outcome's short message (the same as the shard node in ZooKeeper: at most
 * `SHARD_MESSAGE_MAX_BYTES`, for a failure the last line of stderr), never the run's output: a
 * webhook is often a third party's (a chat, a pager), and the output may hold anything the job
 * printed. The full output stays on the executor (`GET /runs/:runId/log`, with the cluster token).
 */
import { checkNamespaceInfo, decodeJson, paths, toError, type JobConfig, type Logger, type ShardOutcome, type ZkClient } from '@orrery/core';

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
  post?: (url: string, body: unknown) => Promise<void>;
  onSent?: (job: string, kind: string) => void;
}

export function createRunAlarms(options: RunAlarmOptions): RunAlarms {
  const last = new Map<string, number>();
  const post = options.post ?? (async (url: string, body: unknown) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`webhook answered ${res.status}`);
  });
  /** The webhook to use and whether the silence window lets this (job, kind) through now. */
  async function gate(job: string, kind: string, jobWebhook: string | undefined): Promise<{ webhook: string; now: number } | undefined> {
    const { data } = await options.zk.get(paths.namespace(options.namespace));
    const ns = checkNamespaceInfo(decodeJson(data, paths.namespace(options.namespace)));
    const webhook = jobWebhook ?? (ns.ok ? ns.value.alarm.webhook : undefined);
    if (!webhook) return undefined;
    const silenceMs = (ns.ok ? ns.value.alarm.silenceSeconds : 300) * 1000;
    const key = `${job}\0${kind}`;
    const now = Date.now();
    const previous = last.get(key);
    if (previous !== undefined && now - previous < silenceMs) return undefined;
    last.set(key, now);
    return { webhook, now };
  }
  return {
    jobEvent(kind, job, body) {
      void (async () => {
        const open = await gate(job, kind, undefined);
        if (!open) return;
        await post(open.webhook, { kind, namespace: options.namespace, job, executor: options.executor, ...body, at: new Date(open.now).toISOString() });
        options.logger.warn({ job, kind }, 'event alarm sent');
        options.onSent?.(job, kind);
      })().catch((error) => options.logger.error({ err: toError(error), job }, 'event alarm could not be sent'));
    },
    runFailed(config, item, outcome) {
      const kind = outcome.status === 'timed-out' ? 'run-timed-out' : 'run-failed';
      if (kind === 'run-failed' && !config.alarm.onFailure) return;
      if (kind === 'run-timed-out' && !config.alarm.onTimeout) return;
      void (async () => {
        const open = await gate(config.name, kind, config.alarm.webhook);
        if (!open) return;
        const { webhook, now } = open;
        await post(webhook, {
          kind,
          namespace: options.namespace,
          job: config.name,
          item,
          executor: options.executor,
          status: outcome.status,
          exitCode: outcome.exitCode,
          message: outcome.message,
          fireTime: new Date(outcome.fireTime).toISOString(),
          runId: outcome.runId,
          at: new Date(now).toISOString(),
        });
        options.logger.warn({ job: config.name, item, kind }, 'run alarm sent');
        options.onSent?.(config.name, kind);
      })().catch((error) => options.logger.error({ err: toError(error), job: config.name }, 'run alarm could not be sent'));
    },
  };
}
