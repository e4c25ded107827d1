// Run history limits end to end, on one real executor process (started with a small log cap) with
// a real allocator and ZooKeeper: a job that floods its output is capped and the executor's memory
// stays bounded; the history's files are private; a corrupt record neither crashes nor blinds it.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { paths, readShard, type JobConfigInput } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { stopAllProcesses, type RunningProcess } from '../src/index.js';
import { NS, TOKEN, startCluster, type Cluster } from './executor-support.js';

const zkConnect = inject('zkConnect');
const MIB = 1024 * 1024;
const CAP_MIB = 2;
let c: Cluster;
let e1: RunningProcess & { port: number };

beforeAll(async () => {
  c = await startCluster('history-limits', zkConnect);
  e1 = await c.startExecutor('e1', ['--max-log-size', String(CAP_MIB)]);
  await c.startAllocator();
  await c.waitMembers(1);
});
afterAll(async () => {
  await c.close();
  await stopAllProcesses();
});

async function job(config: JobConfigInput): Promise<void> {
  await c.apply({ enabled: true, ...config });
  await c.waitApplied(config.name);
}

const lastOutcome = async (name: string) => (await readShard(c.zk, paths.jobShard(NS, name, 0)))?.state.last;
const runsDir = (name: string): string => join(c.dir, 'e1', 'runs', name);
/** The run record of the job's last run (saved just after the outcome is in ZooKeeper). */
async function savedRecord(name: string): Promise<{ runId: string; status: string; truncated?: { stdout?: number; stderr?: number } }> {
  const runId = (await lastOutcome(name))!.runId;
  let text = '';
  await eventually(() => { text = readFileSync(join(runsDir(name), `${runId}.json`), 'utf8'); });
  return JSON.parse(text) as { runId: string; status: string; truncated?: { stdout?: number; stderr?: number } };
}
const api = (path: string) => fetch(`http://127.0.0.1:${e1.port}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });

/** The executor's resident memory, in bytes (VmRSS of /proc/<pid>/status). */
function rss(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kb) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) * 1024;
}

describe('run logs', () => {
  it('caps a job printing 200 MB as fast as it can: marker, truncated record, success, and the executor\'s memory stays bounded', async () => {
    const total = 200_000_000;
    await job({ name: 'flood', type: 'shell', command: `head -c ${total} /dev/zero | tr '\\0' x` });
    const before = rss(e1.pid);
    let peak = before;
    const sampler = setInterval(() => { peak = Math.max(peak, rss(e1.pid)); }, 20);
    try {
      expect((await c.cli('run', 'flood')).code).toBe(0);
      await eventually(async () => expect((await lastOutcome('flood'))?.status).toBe('succeeded'), { timeoutMs: 60_000 });
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, rss(e1.pid));
    // The bound: without back-pressure and a cap the executor held the output it could not write
    // yet (its RSS rose by ~100 MB for 200 MB in half a second). With them it holds at most a pipe
    // chunk and a file buffer per stream, plus the garbage of the chunks read and dropped, which V8
    // collects as it goes: tens of MB at worst. 60 MB is under a third of the output.
    const grewMB = (peak - before) / MIB;
    console.log(`executor RSS ${Math.round(before / MIB)} MB before, ${Math.round(peak / MIB)} MB at the peak (+${grewMB.toFixed(1)} MB) while a job printed 200 MB`);
    expect(grewMB).toBeLessThan(60);

    const record = await savedRecord('flood');
    const runId = record.runId;
    expect(record.status).toBe('succeeded');
    expect(record.truncated).toEqual({ stdout: total - CAP_MIB * MIB });
    const logPath = join(runsDir('flood'), `${runId}.stdout.log`);
    const marker = `\n[orrery: log truncated at ${CAP_MIB} MiB; ${total - CAP_MIB * MIB} more bytes were discarded]\n`;
    expect(statSync(logPath).size).toBe(CAP_MIB * MIB + marker.length);
    expect(readFileSync(logPath, 'latin1').endsWith(marker)).toBe(true);
    expect(readdirSync(runsDir('flood')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('keeps the history private: runs/ and tmp/ 0700, records and logs 0600', async () => {
    await job({ name: 'private', type: 'shell', command: 'echo secret; echo also >&2' });
    expect((await c.cli('run', 'private')).code).toBe(0);
    await eventually(async () => expect((await lastOutcome('private'))?.status).toBe('succeeded'));
    const { runId } = await savedRecord('private');
    const mode = (path: string): number => statSync(path).mode & 0o777;
    expect(mode(join(c.dir, 'e1', 'runs'))).toBe(0o700);
    expect(mode(runsDir('private'))).toBe(0o700);
    expect(mode(join(c.dir, 'e1', 'tmp'))).toBe(0o700);
    for (const f of [`${runId}.json`, `${runId}.stdout.log`, `${runId}.stderr.log`]) expect(mode(join(runsDir('private'), f))).toBe(0o600);
  });
});

describe('a corrupt record', () => {
  it('is skipped by the history endpoint, logged once naming its file, and the executor stays up', async () => {
    await eventually(async () => expect((await lastOutcome('private'))?.status).toBe('succeeded'));
    const good = (await savedRecord('private')).runId;
    const badId = `${Date.now().toString(36)}-0-corrupt`;
    const badFile = join(runsDir('private'), `${badId}.json`);
    writeFileSync(badFile, '{"job": "private", "runId": "'); // a record cut short
    for (let i = 0; i < 2; i += 1) {
      const list = await api('/runs?job=private');
      expect(list.status).toBe(200);
      expect(((await list.json()) as Array<{ runId: string }>).map((r) => r.runId)).toEqual([good]);
      expect((await api(`/runs/${badId}`)).status).toBe(404);
    }
    expect((await api(`/runs/${good}`)).status).toBe(200);
    const warned = e1.lines.filter((l) => l.includes('skipping a run record that cannot be read'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain(badFile);
    expect((await fetch(`http://127.0.0.1:${e1.port}/healthz`)).status).toBe(200);
  });
});
