/**
 * What a namespace costs ZooKeeper, read on the server: `mntr` counters, the watches of `wchc`
 * (session → watched paths) sorted by the kind of node and by who holds them, and the znodes of a
 * job's subtree sorted by kind.
 */
import { fourLetterWord, type ZooKeeperServer } from '@orrery/core/testing';
import type { ZkClient } from '@orrery/core';

/** The mntr counters the bench reads. */
export interface Mntr { znodes: number; watches: number; dataBytes: number; ephemerals: number }

/** `mntr`'s counters (wide answers may take a while on a loaded server: a 30-s bound). */
export async function readMntr(server: ZooKeeperServer): Promise<Mntr> {
  const text = await fourLetterWord(server.clientPort, 'mntr', 30_000);
  const get = (key: string): number => {
    const m = new RegExp(`^${key}\\s+(\\d+)`, 'm').exec(text);
    if (!m) throw new Error(`mntr has no ${key}`);
    return Number(m[1]);
  };
  return { znodes: get('zk_znode_count'), watches: get('zk_watch_count'), dataBytes: get('zk_approximate_data_size'), ephemerals: get('zk_ephemerals_count') };
}

/** Who holds a session: the bench sorts sessions by the ids its processes logged. */
export type WatchRole = 'executors' | 'allocator' | 'console' | 'bench';

/** The kind of a node, from its path under the namespace: per job, or shared. */
export type NodeKind =
  | 'job config' | 'assignment' | 'applied' | 'leader latch' | 'shards folder' | 'shard' | 'commands'
  | 'jobs folder' | 'executor nodes' | 'executors folder' | 'namespace' | 'other';

/** Kinds that exist once per job (the rest are per namespace or per executor). */
export const JOB_KINDS: readonly NodeKind[] = ['job config', 'assignment', 'applied', 'leader latch', 'shards folder', 'shard', 'commands'];

/** The kind of the node at `path` (a server path), `nsPath` being the namespace's server path. */
export function kindOf(path: string, nsPath: string): NodeKind {
  if (path === nsPath || path === `${nsPath}/sharding`) return 'namespace';
  if (!path.startsWith(`${nsPath}/`)) return 'other';
  const rest = path.slice(nsPath.length + 1).split('/');
  if (rest[0] === 'executors') return rest.length === 1 ? 'executors folder' : 'executor nodes';
  if (rest[0] !== 'jobs') return 'other';
  if (rest.length === 1) return 'jobs folder';
  if (rest.length === 2) return 'job config';
  switch (rest[2]) {
    case 'assignment': return 'assignment';
    case 'applied': return 'applied';
    case 'leader': return 'leader latch';
    case 'shards': return rest.length === 3 ? 'shards folder' : 'shard';
    case 'commands': return 'commands';
    default: return 'other';
  }
}

/** `wchc` parsed: session id (lower-case hex, no `0x`, no leading zeros) → watched paths. */
export function parseWchc(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    if (/^0x[0-9a-f]+/i.test(line)) {
      current = [];
      out.set(normalSession(line.trim()), current);
    } else if (current && line.trim().startsWith('/')) current.push(line.trim());
  }
  return out;
}

/** A session id as compared here: lower-case hex without `0x` and leading zeros. */
export function normalSession(id: string): string {
  return id.trim().replace(/^0x/i, '').replace(/^0+/, '').toLowerCase();
}

/** Watches tallied by node kind and holder. */
export type WatchTally = Record<NodeKind, Record<WatchRole, number>>;

function emptyTally(): WatchTally {
  const kinds: NodeKind[] = [...JOB_KINDS, 'jobs folder', 'executor nodes', 'executors folder', 'namespace', 'other'];
  return Object.fromEntries(kinds.map((k) => [k, { executors: 0, allocator: 0, console: 0, bench: 0 }])) as WatchTally;
}

/** Every watch of `wchc` sorted by the kind of node and its holder (sessions not in `roles`: executors). */
export async function tallyWatches(server: ZooKeeperServer, nsPath: string, roles: ReadonlyMap<string, WatchRole>): Promise<{ tally: WatchTally; total: number; sessions: number }> {
  const text = await fourLetterWord(server.clientPort, 'wchc', 60_000);
  const tally = emptyTally();
  let total = 0;
  const sessions = parseWchc(text);
  for (const [session, paths] of sessions) {
    const role = roles.get(session) ?? 'executors';
    for (const path of paths) {
      tally[kindOf(path, nsPath)][role] += 1;
      total += 1;
    }
  }
  return { tally, total, sessions: sessions.size };
}

/** The znodes of one job's subtree (the job node included), as paths relative to the job node. */
export async function jobSubtree(zk: ZkClient, jobPath: string): Promise<string[]> {
  const out: string[] = [''];
  const walk = async (rel: string): Promise<void> => {
    const children = await zk.getChildren(rel ? `${jobPath}/${rel}` : jobPath).catch(() => [] as string[]);
    for (const c of children.sort()) {
      const child = rel ? `${rel}/${c}` : c;
      out.push(child);
      await walk(child);
    }
  };
  await walk('');
  return out;
}

/** The kind of a node of a job's subtree, from its path relative to the job node. */
export function jobNodeKind(rel: string): NodeKind {
  if (rel === '') return 'job config';
  const head = rel.split('/')[0]!;
  if (head === 'shards') return rel === 'shards' ? 'shards folder' : 'shard';
  if (head === 'leader') return 'leader latch';
  if (head === 'assignment' || head === 'applied' || head === 'commands') return head;
  return 'other';
}
