/**
 * Test support for the cluster views (shards, executors, assignment, cron, stats, events): a console
 * app on a real ZooKeeper (a unique root) with a test authenticator (an `x-test-user` header naming
 * one of {@link CLUSTER_PRINCIPALS}), an auditor that keeps its entries, and helpers that write
 * the nodes the allocator and executors would. Not for production code paths.
 */
import { createMetrics, createZkClient, encodeJson, parseJobConfig, paths, silentLogger, type Assignment, type JobConfigInput, type ShardState, type ZkClient } from '@orrery/core';
import { uniqueRoot } from '@orrery/core/testing';
import type { FastifyRequest, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Principal } from '../access.js';
import { createConsoleApp, type ConsoleRoutes } from '../app.js';
import { createConsoleCache, type ConsoleCache } from '../console-cache.js';
import type { AuditEntry, ConsoleContext } from '../context.js';
import { createNamespace } from '../../store/namespaces.js';

/** The test callers: an admin, and an owner, an operator and a viewer of namespace `shop`; `eve` has no role. */
export const CLUSTER_PRINCIPALS: Record<string, Principal> = {
  root: { user: 'root', admin: true, roles: {}, via: 'token' },
  ann: { user: 'ann', admin: false, roles: { shop: 'owner' }, via: 'token' },
  oli: { user: 'oli', admin: false, roles: { shop: 'operator' }, via: 'token' },
  vic: { user: 'vic', admin: false, roles: { shop: 'viewer' }, via: 'token' },
  eve: { user: 'eve', admin: false, roles: {}, via: 'token' },
};

/** A console on a real ZooKeeper for one test file. */
export interface ClusterTestConsole {
  zk: ZkClient;
  cache: ConsoleCache;
  ctx: ConsoleContext;
  root: string;
  audited: AuditEntry[];
  app: ReturnType<typeof createConsoleApp>;
  /** `app.inject()` as `user` (a key of {@link CLUSTER_PRINCIPALS}; undefined: no credentials). */
  as(user: string | undefined, options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** Starts a console on a fresh root with namespace `shop`. */
export async function startClusterConsole(zkConnect: string, label: string, routes: readonly ConsoleRoutes[], options: { now?: () => number; wrapCache?: (cache: ConsoleCache) => ConsoleCache; root?: string } = {}): Promise<ClusterTestConsole> {
  const root = options.root ?? uniqueRoot(label);
  const zk = createZkClient({ connect: zkConnect, root });
  await zk.start();
  if (!(await zk.exists(paths.namespace('shop')))) await createNamespace(zk, 'shop', {});
  const raw = createConsoleCache(zk);
  await raw.start();
  const cache = options.wrapCache ? options.wrapCache(raw) : raw;
  const audited: AuditEntry[] = [];
  const ctx: ConsoleContext = {
    zk, cache, logger: silentLogger(), metrics: createMetrics(),
    auth: { authenticate: async (request: FastifyRequest) => CLUSTER_PRINCIPALS[String(request.headers['x-test-user'] ?? '')] },
    audit: { record: async (_request, entry) => { audited.push(entry); } },
    clusterToken: undefined, sessionTtlMs: 3_600_000, now: options.now ?? (() => Date.now()),
  };
  const app = createConsoleApp(ctx, { routes });
  await app.ready();
  return {
    zk, cache, ctx, root, audited, app,
    as: (user, inject) => app.inject({ ...inject, headers: { ...(user ? { 'x-test-user': user } : {}), ...(inject.headers ?? {}) } }),
    async close() {
      await app.close();
      await raw.close();
      await zk.close();
    },
  };
}

/** Writes a job config node (every default filled in) in namespace `shop`. */
export async function writeJob(zk: ZkClient, input: Omit<JobConfigInput, 'type'> & { type?: JobConfigInput['type'] }): Promise<void> {
  const config = parseJobConfig(input.type === 'node' ? input : { type: 'shell', command: 'true', ...input });
  const path = paths.job('shop', config.name);
  if (await zk.exists(path)) await zk.set(path, encodeJson(config));
  else await zk.create(path, encodeJson(config));
}

/** Writes a job's assignment node as the allocator would. */
export async function writeAssignment(zk: ZkClient, job: string, items: Record<string, number[]>, unassigned: Assignment['unassigned'] = []): Promise<void> {
  const path = paths.jobAssignment('shop', job);
  const value: Assignment = { epoch: 1, allocatorEpoch: 1, items, unassigned, writtenAt: Date.now() };
  if (await zk.exists(path)) await zk.set(path, encodeJson(value));
  else await zk.create(path, encodeJson(value));
}

/** Writes a shard node as an executor would. */
export async function writeShard(zk: ZkClient, job: string, item: number, state: ShardState): Promise<void> {
  const path = paths.jobShard('shop', job, item);
  await zk.mkdirp(paths.jobShards('shop', job));
  if (await zk.exists(path)) await zk.set(path, encodeJson(state));
  else await zk.create(path, encodeJson(state));
}

/** An executor's presence, held by a ZooKeeper session of its own (ephemeral, as a real executor's). */
export async function startPresence(zkConnect: string, root: string, name: string, extra: { handlers?: string[]; tags?: string[] } = {}): Promise<{ close(): Promise<void> }> {
  const zk = createZkClient({ connect: zkConnect, root, sessionTimeoutMs: 4000 });
  await zk.start();
  await zk.mkdirp(paths.executor('shop', name));
  await zk.create(paths.executorPresence('shop', name), encodeJson({ host: 'sim-host', pid: 4242, version: '9.9.9', startedAt: 1_700_000_000_000, handlers: extra.handlers ?? [], tags: extra.tags ?? [] }), 'ephemeral');
  return { close: () => zk.close() };
}
