/**
 * Run alarms: on a `failed` or `timed-out` outcome (with the job's `alarm.onFailure` /
 * `alarm.onTimeout`), POST a JSON alarm to the job's `alarm.webhook`, else the namespace's, at most
 * once per job and kind per the namespace's silence window.
 */
import { checkNamespaceInfo, decodeJson, paths, toError, type JobConfig, type Logger, type ShardOutcome, type ZkClient } from '@orrery/core';

export interface RunAlarms {
  runFailed(config: JobConfig, item: number, outcome: ShardOutcome): void;
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
  return {
    runFailed(config, item, outcome) {
      const kind = outcome.status === 'timed-out' ? 'run-timed-out' : 'run-failed';
      if (kind === 'run-failed' && !config.alarm.onFailure) return;
      if (kind === 'run-timed-out' && !config.alarm.onTimeout) return;
      void (async () => {
        const { data } = await options.zk.get(paths.namespace(options.namespace));
        const ns = checkNamespaceInfo(decodeJson(data, paths.namespace(options.namespace)));
        const webhook = config.alarm.webhook ?? (ns.ok ? ns.value.alarm.webhook : undefined);
        if (!webhook) return;
        const silenceMs = (ns.ok ? ns.value.alarm.silenceSeconds : 300) * 1000;
        const key = `${config.name}\0${kind}`;
        const now = Date.now();
        const previous = last.get(key);
        if (previous !== undefined && now - previous < silenceMs) return;
        last.set(key, now);
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
          stderrTail: outcome.stderrTail.slice(-1024),
          at: new Date(now).toISOString(),
        });
        options.logger.warn({ job: config.name, item, kind }, 'run alarm sent');
        options.onSent?.(config.name, kind);
      })().catch((error) => options.logger.error({ err: toError(error), job: config.name }, 'run alarm could not be sent'));
    },
  };
}
