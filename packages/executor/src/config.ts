/**
 * orrery-executor's configuration: flags over environment over defaults, parsed once, every problem
 * listed at once, frozen.
 */
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { NODE_NAME_PATTERN, OrreryError, collectZkAuth, resolveZkConnect, toError, type ValidationIssue } from '@orrery/core';
import { parseSecretEnv } from './job-env.js';
import { DEFAULT_MAX_LOG_BYTES } from './lazy-file.js';

export interface ExecutorConfig {
  zk: string;
  root: string;
  /** ZooKeeper digest credentials `user:password` (never logged). */
  zkAuth: string | undefined;
  namespace: string;
  name: string;
  jobsDir: string | undefined;
  tags: string[];
  dataDir: string | undefined;
  httpPort: number | undefined;
  httpHost: string;
  advertiseHost: string | undefined;
  clusterToken: string | undefined;
  /**
   * Variables (names, or `PREFIX*`) kept from jobs besides Orrery's own secrets: `--secret-env` and
   * `ORRERY_SECRET_ENV`, both (job-env.ts).
   */
  secretEnv: string[];
  sessionTimeoutMs: number;
  killGraceMs: number;
  shutdownTimeoutMs: number;
  nodeWorkers: number;
  /** Each run's log cap per stream, in bytes (`--max-log-size`, MiB). */
  maxLogBytes: number;
  logLevel: string;
}

const MIB = 1024 * 1024;
/** The largest `--max-log-size`, in MiB (4 GiB per stream). */
const MAX_LOG_SIZE_MIB = 4096;

export const EXECUTOR_USAGE = `Usage: orrery-executor --namespace NS [--zk HOST:PORT[,…]] [--root PATH] [--name NAME] [--jobs DIR]
                       [--tags a,b] [--http-port N] [--http-host H] [--advertise-host H] [--data-dir DIR]
                       [--session-timeout SECONDS] [--kill-grace SECONDS] [--shutdown-timeout SECONDS]
                       [--node-workers N] [--secret-env NAME[,NAME…]] [--max-log-size MB] [--log-level L]

Runs the shards of its namespace's jobs that the allocator gives it.
  --namespace        the namespace (env ORRERY_NAMESPACE)
  --zk               ZooKeeper (env ORRERY_ZK, else npm start's local one, else 127.0.0.1:2181)
  --root             Orrery's root in ZooKeeper (env ORRERY_ROOT, else /orrery)
  --zk-auth-file     ZooKeeper digest credentials USER:PASSWORD in a file (else env ORRERY_ZK_AUTH)
  --name             this executor's name (env ORRERY_EXECUTOR_NAME, else the host name)
  --jobs             a folder of Node job modules (defineJob)
  --tags             tags for preferList entries of the form @tag
  --http-port        serve /healthz, /metrics and run history on this port (0: any free port)
  --http-host        bind address (default 127.0.0.1: this host only; 0.0.0.0: every interface)
  --advertise-host   host name others reach this executor by (put in its httpUrl; default the host name)
  --data-dir         run history and logs (default ~/.local/state/orrery/NS/NAME)
  --session-timeout  ZooKeeper session timeout in seconds (default 10)
  --kill-grace       seconds between SIGTERM and SIGKILL on timeout or stop (default 5)
  --shutdown-timeout on SIGTERM/SIGINT, seconds to let runs in progress finish (default 30);
                     a second signal stops them at once; while still connecting to
                     ZooKeeper at start, a signal exits at once (code 0)
  --node-workers     at most this many Node job processes at once (default 8)
  --secret-env       variables jobs never see, besides Orrery's own (ORRERY_CLUSTER_TOKEN,
                     ORRERY_ZK_AUTH, ORRERY_ADMIN_PASSWORD): names, or a prefix and * (AWS_*);
                     env ORRERY_SECRET_ENV adds to the list
  --max-log-size     keep at most this many MiB of each run's stdout and of its stderr (1 to 4096,
                     default 64); the rest is discarded and the log ends with a marker line
  --log-level        trace|debug|info|warn|error (default info)
  -h, --help         this text;  -V, --version: the version
The run history endpoint is off unless ORRERY_CLUSTER_TOKEN is set (shared by the cluster). In
production: --http-host 0.0.0.0 --advertise-host <name others reach>, behind a firewall.
`;

export function parseExecutorConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ExecutorConfig {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        namespace: { type: 'string', short: 'n' }, zk: { type: 'string' }, root: { type: 'string' }, 'zk-auth-file': { type: 'string' }, name: { type: 'string' },
        jobs: { type: 'string' }, tags: { type: 'string' }, 'http-port': { type: 'string' }, 'http-host': { type: 'string' },
        'advertise-host': { type: 'string' }, 'data-dir': { type: 'string' }, 'session-timeout': { type: 'string' },
        'kill-grace': { type: 'string' }, 'shutdown-timeout': { type: 'string' }, 'node-workers': { type: 'string' }, 'secret-env': { type: 'string' }, 'max-log-size': { type: 'string' }, 'log-level': { type: 'string' }, help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new OrreryError('usage', (error as Error).message);
  }
  if (values.help) throw new OrreryError('usage', 'help');
  const issues: ValidationIssue[] = [];
  const int = (field: string, raw: string | undefined, min: number, max: number, fallback: number): number => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      issues.push({ field, rule: 'range', message: `${field}: must be an integer from ${min} to ${max} (got '${raw}')` });
      return fallback;
    }
    return n;
  };
  const namespace = values.namespace ?? env.ORRERY_NAMESPACE ?? '';
  if (!namespace) issues.push({ field: '--namespace', rule: 'required', message: '--namespace: required (or env ORRERY_NAMESPACE)' });
  else if (!NODE_NAME_PATTERN.test(namespace)) issues.push({ field: '--namespace', rule: 'pattern', message: `--namespace: '${namespace}' must match ${NODE_NAME_PATTERN.source}` });
  const name = values.name ?? env.ORRERY_EXECUTOR_NAME ?? hostname();
  if (!NODE_NAME_PATTERN.test(name)) issues.push({ field: '--name', rule: 'pattern', message: `--name: '${name}' must match ${NODE_NAME_PATTERN.source}` });
  const tags = (values.tags ?? '').split(',').map((t) => t.trim()).filter(Boolean);
  for (const t of tags) if (!/^[A-Za-z0-9_.-]{1,64}$/.test(t)) issues.push({ field: '--tags', rule: 'pattern', message: `--tags: '${t}' must match [A-Za-z0-9_.-]{1,64}` });
  const httpPort = values['http-port'] === undefined ? undefined : int('--http-port', values['http-port'], 0, 65535, 0);
  const sessionTimeout = int('--session-timeout', values['session-timeout'], 1, 120, 10);
  const killGrace = int('--kill-grace', values['kill-grace'], 0, 600, 5);
  const shutdownTimeout = int('--shutdown-timeout', values['shutdown-timeout'], 0, 3600, 30);
  const nodeWorkers = int('--node-workers', values['node-workers'], 1, 256, 8);
  const maxLogMiB = int('--max-log-size', values['max-log-size'], 1, MAX_LOG_SIZE_MIB, DEFAULT_MAX_LOG_BYTES / MIB);
  const secretEnv = new Set<string>();
  // Both lists count: a flag never makes visible a variable the environment hides.
  for (const [field, raw] of [['--secret-env', values['secret-env']], ['ORRERY_SECRET_ENV', env.ORRERY_SECRET_ENV]] as const) {
    const parsed = parseSecretEnv(raw ?? '', field);
    for (const name of parsed.names) secretEnv.add(name);
    issues.push(...parsed.issues);
  }
  const logLevel = values['log-level'] ?? 'info';
  if (!['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].includes(logLevel)) issues.push({ field: '--log-level', rule: 'one-of', message: `--log-level: must be trace, debug, info, warn or error (got '${logLevel}')` });
  const zkAuth = collectZkAuth(values['zk-auth-file'], env, issues);
  if (issues.length > 0) throw new OrreryError('usage', issues.map((i) => i.message).join('; '), { details: { issues } });
  return Object.freeze({
    zk: resolveZkConnect(values.zk, env).connect,
    root: values.root ?? env.ORRERY_ROOT ?? '/orrery',
    zkAuth,
    namespace,
    name,
    jobsDir: values.jobs,
    tags,
    dataDir: values['data-dir'],
    httpPort,
    httpHost: values['http-host'] ?? '127.0.0.1',
    advertiseHost: values['advertise-host'],
    clusterToken: env.ORRERY_CLUSTER_TOKEN || undefined,
    sessionTimeoutMs: sessionTimeout * 1000,
    killGraceMs: killGrace * 1000,
    shutdownTimeoutMs: shutdownTimeout * 1000,
    nodeWorkers,
    maxLogBytes: maxLogMiB * MIB,
    secretEnv: Object.freeze([...secretEnv]) as string[],
    logLevel,
  });
}
