/**
 * Which ZooKeeper a process talks to when it is not told: the rule every bin and the CLI share.
 *
 * In order: the `--zk` flag; the `ORRERY_ZK` environment variable; the local platform `npm start`
 * runs — `.orrery/local.json` in the working directory or the nearest folder above it that has
 * one (`npm start` writes it with the address of its ZooKeeper); else `127.0.0.1:2181`.
 *
 * The answer says where the address came from, so an error can say it too ("no ZooKeeper at
 * 127.0.0.1:2181 (the default: no --zk, no ORRERY_ZK, no .orrery/local.json)").
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The address used when nothing else names one. */
export const DEFAULT_ZK = '127.0.0.1:2181';

/** The file `npm start` writes beside its data (relative to the checkout). */
export const LOCAL_PLATFORM_FILE = join('.orrery', 'local.json');

/** What `npm start` records of the platform it runs. */
export interface LocalPlatform {
  /** ZooKeeper's connect string. */
  zk: string;
  /** The console's URL, when it runs one. */
  console?: string;
}

/** A ZooKeeper address and where it came from. */
export interface ZkConnect {
  connect: string;
  /** `--zk`, `ORRERY_ZK`, the local platform file's path, or `default`. */
  source: string;
}

/** The nearest `.orrery/local.json` at or above `cwd`, parsed; undefined when there is none or it is not one. */
export function findLocalPlatform(cwd: string): { path: string; platform: LocalPlatform } | undefined {
  for (let dir = cwd; ; dir = dirname(dir)) {
    const path = join(dir, LOCAL_PLATFORM_FILE);
    if (existsSync(path)) {
      const platform = readLocalPlatform(path);
      return platform ? { path, platform } : undefined;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The local platform file at `path`, parsed; undefined when it is missing or not one. */
export function readLocalPlatform(path: string): LocalPlatform | undefined {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    if (typeof value !== 'object' || value === null) return undefined;
    const { zk, console: url } = value as Record<string, unknown>;
    // A connect string of host:port pairs, nothing else (the file is ours, but a hand may edit it).
    if (typeof zk !== 'string' || !/^[\w.-]+:\d{1,5}(,[\w.-]+:\d{1,5})*$/.test(zk)) return undefined;
    return { zk, ...(typeof url === 'string' && /^https?:\/\//.test(url) ? { console: url } : {}) };
  } catch {
    return undefined;
  }
}

/** The ZooKeeper to use, by the rule in this module's header. */
export function resolveZkConnect(flag: string | undefined, env: Readonly<Record<string, string | undefined>>, cwd: string = process.cwd()): ZkConnect {
  if (flag !== undefined) return { connect: flag, source: '--zk' };
  if (env.ORRERY_ZK) return { connect: env.ORRERY_ZK, source: 'ORRERY_ZK' };
  const local = findLocalPlatform(cwd);
  if (local) return { connect: local.platform.zk, source: local.path };
  return { connect: DEFAULT_ZK, source: 'default' };
}

/** "(from ORRERY_ZK)", "(from /src/orrery/.orrery/local.json, written by npm start)", … — for messages. */
export function describeZkSource(source: string): string {
  if (source === 'default') return 'the default: no --zk, no ORRERY_ZK, no .orrery/local.json of npm start';
  if (source === '--zk' || source === 'ORRERY_ZK') return `from ${source}`;
  return `from ${source}, written by npm start — is it running?`;
}
