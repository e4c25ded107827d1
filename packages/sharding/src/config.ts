/**
 * orrery-sharding's configuration: flags over environment over defaults, parsed once, every problem
 * listed at once, frozen.
 */
import { parseArgs } from 'node:util';
import { OrreryError, collectZkAuth, resolveZkConnect, toError, type ValidationIssue } from '@orrery/core';

export interface ShardingConfig {
  zk: string;
  root: string;
  /** ZooKeeper digest credentials `user:password` (never logged). */
  zkAuth: string | undefined;
  /** Port of /metrics and /healthz; undefined: no HTTP endpoint. */
  httpPort: number | undefined;
  httpHost: string;
  id: string | undefined;
  debounceMs: number;
  sessionTimeoutMs: number;
  /** Alarm after a shard of an enabled job is unassigned this long, in ms. */
  alarmAfterMs: number;
  logLevel: string;
}

export const SHARDING_USAGE = `Usage: orrery-sharding [--zk HOST:PORT[,…]] [--root PATH] [--http-port N] [--http-host H]
                       [--id NAME] [--debounce-ms N] [--session-timeout SECONDS] [--alarm-after SECONDS]
                       [--log-level L]

Runs the sharding allocator for every namespace under the root. Run two or more for high
availability: one leads, the others stand by with a warm cache.
  --zk               ZooKeeper (default: env ORRERY_ZK, else npm start's local one, else 127.0.0.1:2181)
  --root             Orrery's root in ZooKeeper (default: env ORRERY_ROOT, else /orrery)
  --zk-auth-file     ZooKeeper digest credentials USER:PASSWORD in a file (default: env ORRERY_ZK_AUTH)
  --http-port        serve /metrics and /healthz on this port (0: any free port)
  --http-host        bind address of the HTTP endpoint (default 127.0.0.1: this host only;
                     0.0.0.0: every interface, behind a firewall)
  --id               name in the leader latch (default host:pid)
  --debounce-ms      quiet time before an allocation round (default 150)
  --session-timeout  ZooKeeper session timeout in seconds (default 10)
  --alarm-after      alarm (namespace webhook) when a shard stays unassigned this long (default 30)
  --log-level        trace|debug|info|warn|error (default info)
  -h, --help         this text;  -V, --version: the version
`;

const int = (issues: ValidationIssue[], field: string, raw: string | undefined, min: number, max: number): number | undefined => {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    issues.push({ field, rule: 'range', message: `${field}: must be an integer from ${min} to ${max} (got '${raw}')` });
    return undefined;
  }
  return n;
};

/** Parses argv and env; throws a `usage` error listing every problem. */
export function parseShardingConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ShardingConfig {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        zk: { type: 'string' }, root: { type: 'string' }, 'zk-auth-file': { type: 'string' }, 'http-port': { type: 'string' }, 'http-host': { type: 'string' },
        id: { type: 'string' }, 'debounce-ms': { type: 'string' }, 'session-timeout': { type: 'string' }, 'log-level': { type: 'string' },
        'alarm-after': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    throw new OrreryError('usage', (error as Error).message);
  }
  if (values.help) throw new OrreryError('usage', 'help');
  const issues: ValidationIssue[] = [];
  const httpPort = int(issues, '--http-port', values['http-port'], 0, 65535);
  const debounceMs = int(issues, '--debounce-ms', values['debounce-ms'], 0, 60_000) ?? 150;
  const sessionTimeout = int(issues, '--session-timeout', values['session-timeout'], 1, 120) ?? 10;
  const alarmAfter = int(issues, '--alarm-after', values['alarm-after'], 1, 86_400) ?? 30;
  const logLevel = values['log-level'] ?? 'info';
  if (!['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].includes(logLevel)) {
    issues.push({ field: '--log-level', rule: 'one-of', message: `--log-level: must be trace, debug, info, warn or error (got '${logLevel}')` });
  }
  const root = values.root ?? env.ORRERY_ROOT ?? '/orrery';
  if (!root.startsWith('/')) issues.push({ field: '--root', rule: 'pattern', message: `--root: must start with '/' (got '${root}')` });
  const zkAuth = collectZkAuth(values['zk-auth-file'], env, issues);
  if (issues.length > 0) throw new OrreryError('usage', issues.map((i) => i.message).join('; '), { details: { issues } });
  return Object.freeze({
    zk: resolveZkConnect(values.zk, env).connect,
    root,
    zkAuth,
    httpPort,
    httpHost: values['http-host'] ?? '127.0.0.1',
    id: values.id,
    debounceMs,
    sessionTimeoutMs: sessionTimeout * 1000,
    alarmAfterMs: alarmAfter * 1000,
    logLevel,
  });
}
