// An embedded executor whose --jobs folder changes while it runs: the handlers in its presence node
// follow (against the real ZooKeeper of the test run).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createZkClient, encodeJson, paths, type ZkClient } from '@orrery/core';
import { eventually, uniqueRoot } from '@orrery/core/testing';
import { createExecutor, type Executor } from './index.js';

const zkConnect = inject('zkConnect');
const root = uniqueRoot('jobs-reload');
const jobs = mkdtempSync(join(tmpdir(), 'orrery-reload-jobs-'));
let admin: ZkClient | undefined;
let executor: Executor | undefined;
afterAll(async () => {
  await executor?.close();
  await admin?.close();
  rmSync(jobs, { recursive: true, force: true });
});

const job = (name: string): string => `export default { name: '${name}', run: () => ({ message: '${name} ran' }) };\n`;

describe('the jobs folder of a running executor', () => {
  it('announces a job added to the folder and forgets one removed, without a restart', async () => {
    writeFileSync(join(jobs, 'first.mjs'), job('first'));
    writeFileSync(join(jobs, 'util.mjs'), 'export const helper = 1;\n');
    admin = createZkClient({ connect: zkConnect, root });
    await admin.start();
    await admin.mkdirp(paths.jobs('reload'));
    await admin.set(paths.namespace('reload'), encodeJson({ description: '', alarm: { silenceSeconds: 300 }, createdAt: 0 }));
    executor = createExecutor({ connect: zkConnect, root, namespace: 'reload', name: 'reloader', jobsDir: jobs, dataDir: mkdtempSync(join(tmpdir(), 'reload-')) });
    await executor.start();
    const handlers = async (): Promise<string[]> => (JSON.parse((await admin!.get(paths.executorPresence('reload', 'reloader'))).data!.toString()) as { handlers: string[] }).handlers;
    expect(await handlers()).toEqual(['first']);
    writeFileSync(join(jobs, 'second.mjs'), job('second'));
    await eventually(async () => expect(await handlers()).toEqual(['first', 'second']), { timeoutMs: 20_000 });
    rmSync(join(jobs, 'first.mjs'));
    await eventually(async () => expect(await handlers()).toEqual(['second']), { timeoutMs: 20_000 });
  });
});
