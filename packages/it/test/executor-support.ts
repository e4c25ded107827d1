// Shared set-up of the executor integration tests: a namespace under a unique root, real
// orrery-sharding and orrery-executor processes, and helpers to read what they wrote.
import { mkdtempSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  checkAssignment,
  checkShardingState,
  createZkClient,
  encodeJson,
  parseJobConfig,
  paths,
  readJson,
  readShard,
  type Assignment,
  type JobConfigInput,
  type ZkClient,
} from '@orrery/core';
import { eventually, freePort, uniqueRoot } from '@orrery/core/testing';
import { createNamespace, runCli } from '@orrery/console';
import { startProcess, stopAllProcesses, type RunningProcess } from '../src/index.js';

export const NS = 'jobs';
export const JOBS_DIR = fileURLToPath(new URL('./jobs/', import.meta.url));
export const TOKEN = 'test-cluster-token';

export interface Cluster {
  root: string;
  zk: ZkClient;
  dir: string;
  zkConnect: string;
  executors: Map<string, RunningProcess & { port: number }>;
  startExecutor(name: string, extra?: string[]): Promise<RunningProcess & { port: number }>;
  startAllocator(): Promise<RunningProcess>;
  apply(job: JobConfigInput): Promise<void>;
  cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  assignment(job: string): Promise<Assignment | undefined>;
  waitMembers(count: number): Promise<void>;
  /** Waits until the job's applied epoch equals its assignment epoch (runs may start). */
  waitApplied(job: string): Promise<void>;
  ledger(file: string): string[];
  close(): Promise<void>;
}

export async function startCluster(label: string, zkConnect: string, settings: Record<string, unknown> = {}): Promise<Cluster> {
  const root = uniqueRoot(label);
  const zk = createZkClient({ connect: zkConnect, root });
  await zk.start();
  await createNamespace(zk, NS, settings);
  const dir = mkdtempSync(join(tmpdir(), `orrery-${label}-`));
  const executors = new Map<string, RunningProcess & { port: number }>();
  const procs: RunningProcess[] = [];
  const cluster: Cluster = {
    root, zk, dir, zkConnect, executors,
    async startExecutor(name, extra = []) {
      const port = await freePort();
      const p = startProcess('orrery-executor', [
        '--zk', zkConnect, '--root', root, '--namespace', NS, '--name', name, '--jobs', JOBS_DIR,
        '--data-dir', join(dir, name), '--http-port', String(port), '--http-host', '127.0.0.1', '--advertise-host', '127.0.0.1',
        '--session-timeout', '3', '--kill-grace', '1', ...extra,
      ], { ORRERY_CLUSTER_TOKEN: TOKEN });
      procs.push(p);
      await p.waitForLine(/"executor started"/, 30_000);
      const handle = Object.assign(p, { port });
      executors.set(name, handle);
      return handle;
    },
    async startAllocator() {
      const port = await freePort();
      const p = startProcess('orrery-sharding', ['--zk', zkConnect, '--root', root, '--http-port', String(port), '--http-host', '127.0.0.1', '--session-timeout', '3', '--debounce-ms', '100']);
      procs.push(p);
      await p.waitForLine(/"allocator started"/);
      return p;
    },
    async apply(job) {
      const config = parseJobConfig(job);
      const path = paths.job(NS, config.name);
      const stat = await zk.exists(path);
      if (stat) await zk.set(path, encodeJson(config), stat.version);
      else await zk.create(path, encodeJson(config));
    },
    async cli(...args) {
      let stdout = '';
      let stderr = '';
      const code = await runCli(['--zk', zkConnect, '--root', root, '-n', NS, ...args], { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, env: {} });
      return { code, stdout, stderr };
    },
    async assignment(job) {
      return (await readJson(zk, paths.jobAssignment(NS, job), checkAssignment))?.value;
    },
    async waitMembers(count) {
      await eventually(async () => expect((await readJson(zk, paths.namespaceSharding(NS), checkShardingState))?.value.members.length).toBe(count), { timeoutMs: 20_000 });
    },
    async waitApplied(job) {
      await eventually(async () => {
        const a = await cluster.assignment(job);
        const applied = await readJson<{ epoch: number }>(zk, paths.jobApplied(NS, job));
        expect(a).toBeDefined();
        expect(applied?.value.epoch).toBe(a!.epoch);
      }, { timeoutMs: 20_000 });
    },
    ledger(file) {
      try {
        return readFileSync(file, 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    },
    async close() {
      await Promise.all(procs.map((p) => p.stop(3000)));
      await zk.close();
    },
  };
  return cluster;
}

/**
 * A cluster of executors `e1` and `e2` and an allocator that counts both, for the whole test file:
 * started before its tests, stopped after them (every process included). Read it inside tests.
 */
export function useTwoExecutorCluster(label: string, zkConnect: string): () => Cluster {
  let c: Cluster | undefined;
  beforeAll(async () => {
    c = await startCluster(label, zkConnect);
    await c.startExecutor('e1');
    await c.startExecutor('e2');
    await c.startAllocator();
    await c.waitMembers(2);
  });
  afterAll(async () => {
    await c?.close();
    await stopAllProcesses();
  });
  return () => c!;
}

/** Waits until no shard of the job is running. */
export async function waitIdle(zk: ZkClient, job: string, items: number, timeoutMs = 20_000): Promise<void> {
  await eventually(async () => {
    for (let i = 0; i < items; i += 1) {
      const shard = await readShard(zk, paths.jobShard(NS, job, i));
      expect(shard?.state.state ?? 'idle').toBe('idle');
    }
  }, { timeoutMs });
}
