/**
 * orrery-console's configuration: flags over environment over defaults, parsed once, every problem
 * listed at once, frozen. Only main.ts reads `process.env` (and passes it here).
 */
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { OrreryError, collectZkAuth, resolveZkConnect, toError, type TrustProxy, type ValidationIssue } from '@orrery/core';

/** The console's settings. */
export interface ConsoleConfig {
  zk: string;
  root: string;
  /** ZooKeeper digest credentials `user:password` (never logged). */
  zkAuth: string | undefined;
  /** HTTP port (0: any free port). Default 8080. */
  port: number;
  /** Bind address. Default 127.0.0.1. */
  host: string;
  /** The first admin's password (`ORRERY_ADMIN_PASSWORD`); used only when no user exists yet. */
  adminPassword: string | undefined;
  /** The executors' cluster token (`ORRERY_CLUSTER_TOKEN`), to read run history and logs from them. */
  clusterToken: string | undefined;
  /** How long a login lasts, in ms. Default 12 hours. */
  sessionTtlMs: number;
  /**
   * The proxies in front trusted with X-Forwarded-For/-Proto (`--trust-proxy`): their number of
   * hops, or their addresses and CIDR ranges; the audit then records the client's address.
   * Default false (the connection's own address).
   */
  trustProxy: TrustProxy;
  logLevel: string;
}

/** Default HTTP port of the console. */
export const DEFAULT_CONSOLE_PORT = 8080;
/** Default length of a login session, in hours. */
export const DEFAULT_SESSION_HOURS = 12;
/** Most proxy hops `--trust-proxy N` accepts. */
export const TRUST_PROXY_HOPS_MAX = 10;
/** proxy-addr's names for address ranges, accepted in a `--trust-proxy` list. */
const TRUST_PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** What `--trust-proxy` takes, named by every message that refuses a value. */
const TRUST_PROXY_FORMS = `give the number of proxies in front (--trust-proxy 1) or their addresses (--trust-proxy 10.0.0.5,10.0.1.0/24); trusting every X-Forwarded-For would let a client claim any address`;

/**
 * Parses `--trust-proxy`'s value (pure): a hop count 1 to {@link TRUST_PROXY_HOPS_MAX}, or a
 * comma-separated list of IPv4/IPv6 addresses, CIDR ranges and `loopback`/`linklocal`/`uniquelocal`.
 * `true` (trust whatever a client writes) is refused. Undefined: not trusted.
 */
export function parseTrustProxy(raw: string | undefined): { value: TrustProxy } | { issue: ValidationIssue } {
  if (raw === undefined) return { value: false };
  const refuse = (message: string): { issue: ValidationIssue } => ({ issue: { field: '--trust-proxy', rule: 'trust-proxy', message: `--trust-proxy: ${message}; ${TRUST_PROXY_FORMS}` } });
  const text = raw.trim();
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    return hops >= 1 && hops <= TRUST_PROXY_HOPS_MAX ? { value: hops } : refuse(`a hop count is 1 to ${TRUST_PROXY_HOPS_MAX} (got '${raw}')`);
  }
  if (/^(true|yes|on|all|\*)$/i.test(text)) return refuse(`'${raw}' is not accepted`);
  const entries = text.split(',').map((e) => e.trim());
  const bad = entries.filter((entry) => !isTrustedProxyEntry(entry));
  if (entries.length === 0 || bad.length > 0) return refuse(`not an address, CIDR range or hop count: ${bad.map((b) => `'${b}'`).join(', ') || `'${raw}'`}`);
  return { value: Object.freeze(entries) };
}

/** An IP address, a CIDR range (`10.0.0.0/8`, `fd00::/8`) or one of proxy-addr's range names (pure). */
function isTrustedProxyEntry(entry: string): boolean {
  if (TRUST_PROXY_RANGE_NAMES.includes(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

export const CONSOLE_USAGE = `Usage: orrery-console [--zk HOST:PORT[,…]] [--root PATH] [--zk-auth-file FILE] [--port N] [--host H]
                      [--session-hours N] [--trust-proxy HOPS|ADDR[,…]] [--log-level L]

Serves Orrery's console: the REST API (/api/v1, OpenAPI at /api/v1/openapi.json, docs at /docs)
and the web UI. Keeps no state of its own: run several behind a load balancer.
  --zk              ZooKeeper (default: env ORRERY_ZK, else npm start's local one, else 127.0.0.1:2181)
  --root            Orrery's root in ZooKeeper (default: env ORRERY_ROOT, else /orrery)
  --zk-auth-file    ZooKeeper digest credentials USER:PASSWORD in a file (default: env ORRERY_ZK_AUTH)
  --port            HTTP port (default: env ORRERY_CONSOLE_PORT, else ${DEFAULT_CONSOLE_PORT}; 0: any free port)
  --host            bind address (default 127.0.0.1; 0.0.0.0 for every interface)
  --session-hours   how long a login lasts (default ${DEFAULT_SESSION_HOURS})
  --trust-proxy     behind reverse proxies: the number of proxies in front (1: the one proxy), or
                    their addresses/CIDR ranges (10.0.0.5,10.0.1.0/24); the client's address and
                    scheme are then taken from X-Forwarded-For / X-Forwarded-Proto as those proxies
                    wrote them (only if every request comes through them)
  --log-level       trace|debug|info|warn|error (default info)
  -h, --help        this text;  -V, --version: the version
Environment: ORRERY_ADMIN_PASSWORD (the first admin's password; else one is generated and printed
once), ORRERY_CLUSTER_TOKEN (to read run history and logs from the executors),
ORRERY_CONSOLE_HEAP_MB (V8's heap limit in MB, default 256; 0: Node's default; read by the
orrery-console command when it starts Node).
`;

/** Parses argv and env; throws a `usage` error listing every problem. */
export function parseConsoleConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ConsoleConfig {
  // A bare --trust-proxy (as it once was) would trust whatever a client writes: say what to give instead.
  const bare = argv.findIndex((arg, i) => arg === '--trust-proxy' && (i + 1 >= argv.length || argv[i + 1]!.startsWith('-')));
  if (bare >= 0) throw new OrreryError('usage', `--trust-proxy needs a value: ${TRUST_PROXY_FORMS}`, { details: { issues: [{ field: '--trust-proxy', rule: 'trust-proxy', message: `--trust-proxy: needs a value; ${TRUST_PROXY_FORMS}` }] } });
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        zk: { type: 'string' }, root: { type: 'string' }, 'zk-auth-file': { type: 'string' }, port: { type: 'string' }, host: { type: 'string' },
        'session-hours': { type: 'string' }, 'trust-proxy': { type: 'string' }, 'log-level': { type: 'string' }, help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new OrreryError('usage', toError(error).message);
  }
  if (values.help) throw new OrreryError('usage', 'help');
  const issues: ValidationIssue[] = [];
  const int = (field: string, raw: string | undefined, min: number, max: number, fallback: number): number => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) {
      issues.push({ field, rule: 'range', message: `${field}: must be an integer from ${min} to ${max} (got '${raw}')` });
      return fallback;
    }
    return n;
  };
  const port = int('--port', values.port ?? env.ORRERY_CONSOLE_PORT, 0, 65_535, DEFAULT_CONSOLE_PORT);
  const sessionHours = int('--session-hours', values['session-hours'], 1, 24 * 30, DEFAULT_SESSION_HOURS);
  const logLevel = values['log-level'] ?? 'info';
  if (!['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].includes(logLevel)) {
    issues.push({ field: '--log-level', rule: 'one-of', message: `--log-level: must be trace, debug, info, warn or error (got '${logLevel}')` });
  }
  const root = values.root ?? env.ORRERY_ROOT ?? '/orrery';
  if (!root.startsWith('/')) issues.push({ field: '--root', rule: 'pattern', message: `--root: must start with '/' (got '${root}')` });
  const adminPassword = env.ORRERY_ADMIN_PASSWORD || undefined;
  if (adminPassword !== undefined && adminPassword.length < 8) {
    issues.push({ field: 'ORRERY_ADMIN_PASSWORD', rule: 'min-length', message: 'ORRERY_ADMIN_PASSWORD: must be at least 8 characters' });
  }
  const trustProxy = parseTrustProxy(values['trust-proxy']);
  if ('issue' in trustProxy) issues.push(trustProxy.issue);
  const zkAuth = collectZkAuth(values['zk-auth-file'], env, issues);
  if (issues.length > 0) throw new OrreryError('usage', issues.map((i) => i.message).join('; '), { details: { issues } });
  return Object.freeze({
    zk: resolveZkConnect(values.zk, env).connect,
    root,
    zkAuth,
    port,
    host: values.host ?? '127.0.0.1',
    adminPassword,
    clusterToken: env.ORRERY_CLUSTER_TOKEN || undefined,
    sessionTtlMs: sessionHours * 3_600_000,
    trustProxy: 'value' in trustProxy ? trustProxy.value : false,
    logLevel,
  });
}
