// The job config size limit end to end: a config of exactly JOB_CONFIG_MAX_BYTES is applied,
// allocated and run by real processes; one byte more is refused before anything is written.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { JOB_CONFIG_MAX_BYTES, paths, readShard } from '@orrery/core';
import { eventually, jobConfigOfSize } from '@orrery/core/testing';
import { stopAllProcesses } from '../src/index.js';
import { NS, startCluster, type Cluster } from './executor-support.js';

const zkConnect = inject('zkConnect');
let c: Cluster;
beforeAll(async () => {
  c = await startCluster('config-size', zkConnect);
  await c.startExecutor('e1');
  await c.startAllocator();
  await c.waitMembers(1);
});
afterAll(async () => {
  await c.close();
  await stopAllProcesses();
});

describe('job config size', () => {
  it(`applies, allocates and runs a config of exactly ${JOB_CONFIG_MAX_BYTES} bytes; refuses one byte more and writes nothing`, async () => {
    const atLimit = jobConfigOfSize(JOB_CONFIG_MAX_BYTES, { name: 'big', type: 'shell', command: 'echo "$ORRERY_SHARD_PARAM" | wc -c', enabled: true });
    const file = join(c.dir, 'big.json');
    writeFileSync(file, JSON.stringify({ jobs: [atLimit] }));
    const applied = await c.cli('apply', '-f', file);
    expect(applied.code, applied.stderr).toBe(0);
    const stat = (await c.zk.exists(paths.job(NS, 'big')))!;
    expect(stat.dataLength).toBe(JOB_CONFIG_MAX_BYTES);
    await c.waitApplied('big');
    expect(Object.values((await c.assignment('big'))!.items).flat()).toHaveLength(100);
    const ran = await c.cli('run', 'big', '--items', '0');
    expect(ran.code, ran.stderr).toBe(0);
    await eventually(async () => expect((await readShard(c.zk, paths.jobShard(NS, 'big', 0)))?.state.last?.status).toBe('succeeded'), { timeoutMs: 20_000 });

    const over = jobConfigOfSize(JOB_CONFIG_MAX_BYTES + 1, { name: 'bigger', type: 'shell', command: 'true' });
    writeFileSync(file, JSON.stringify({ jobs: [over] }));
    const refused = await c.cli('apply', '-f', file);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`the limit is ${JOB_CONFIG_MAX_BYTES} bytes`);
    expect(refused.stderr).toContain('max-size');
    expect(await c.zk.exists(paths.job(NS, 'bigger'))).toBeNull();
  });
});
