// `orrery apply` as users expect it: every problem of a file at once, named by job, with the field
// meant for an unknown one; warnings for Node handlers no executor offers; kubectl's three-way merge.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createEphemeralNode, createZkClient, paths, type ZkClient } from '@orrery/core';
import { uniqueRoot } from '@orrery/core/testing';
import { main } from './main.js';
import { mergeApplied, validateJobDocument } from '../store/jobs.js';
import { createNamespace } from '../store/namespaces.js';
import { suggestField } from '@orrery/core/schemas';

const zkConnect = inject('zkConnect');
const root = uniqueRoot('apply');
const dir = mkdtempSync(join(tmpdir(), 'orrery-apply-'));
let zk: ZkClient;

beforeAll(async () => {
  zk = createZkClient({ connect: zkConnect, root });
  await zk.start();
  await createNamespace(zk, 'ns');
});
afterAll(async () => {
  await zk.close();
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(['--zk', zkConnect, '--root', root, '-n', 'ns', ...args], {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env: {},
  });
  return { code, stdout, stderr };
}

let files = 0;
function file(text: string): string {
  const path = join(dir, `jobs-${(files += 1)}.yaml`);
  writeFileSync(path, text);
  return path;
}

const stored = async (name: string): Promise<Record<string, unknown>> => JSON.parse((await zk.get(paths.job('ns', name))).data!.toString()) as Record<string, unknown>;

describe('suggestions for unknown fields', () => {
  it.each([
    ['shardingCount', 'shardingTotalCount'],
    ['cronn', 'cron'],
    ['TimeZone', 'timeZone'],
    ['enable', 'enabled'],
    ['timeout', 'timeoutSeconds'],
    ['jobParam', 'jobParameter'],
    ['zzz', undefined],
    ['colour', undefined],
  ])('%s → %s', (name, meant) => {
    expect(suggestField(name, ['name', 'type', 'command', 'cron', 'timeZone', 'shardingTotalCount', 'jobParameter', 'enabled', 'timeoutSeconds', 'description'])).toBe(meant);
  });
});

describe('apply validates the whole file at once', () => {
  it('reports every problem in one round: type errors hide nothing, file-level problems come with the rest, each named by job', async () => {
    const r = await cli('apply', '-f', file(`
jobs:
  - name: nightly-report
    type: shell
    command: ./report.sh
    cron: "61 * * * *"
    shardingTotalCount: "3"
    shardingCount: 3
  - name: nightly-report
    type: node
  - name: sync
    type: shell
    command: ./sync.sh
    downstream: [missing-job]
    executorHandler: x
  - name: loop-a
    type: shell
    command: "true"
    downstream: [loop-b]
  - name: loop-b
    type: shell
    command: "true"
    downstream: [loop-a]
`));
    expect(r.code).toBe(1);
    const e = r.stderr;
    // One job's type error did not hide its cron error or its unknown field …
    expect(e).toContain('jobs[0] (nightly-report).shardingTotalCount:');
    expect(e).toMatch(/jobs\[0\] \(nightly-report\)\.cron: .*61/);
    expect(e).toContain("jobs[0] (nightly-report).shardingCount: unknown field; did you mean 'shardingTotalCount'?");
    // … nor another job's problems, nor the file's own.
    expect(e).toContain("jobs[1] (nightly-report).handler: required for a job of type 'node'");
    expect(e).toContain("jobs[1] (nightly-report).name: 'nightly-report' is defined twice (also jobs[0])");
    expect(e).toContain("jobs[2] (sync).downstream[0]: no job named 'missing-job'");
    expect(e).toContain("jobs[2] (sync).executorHandler: unknown field; Orrery calls it 'handler'");
    expect(e).toMatch(/jobs\[3\] \(loop-a\)\.downstream: .*cycle: loop-a → loop-b → loop-a/);
    expect(await zk.getChildren(paths.jobs('ns'))).toEqual([]);
  });

  it('says that a created job is disabled, and warns (without failing) about a Node handler no online executor offers', async () => {
    const presence = createEphemeralNode(zk, paths.executorPresence('ns', 'e1'), { host: 'h', pid: 1, version: '0.1.0', startedAt: 1, handlers: ['other'], tags: [] });
    await presence.start();
    try {
      const r = await cli('apply', '-f', file(`
jobs:
  - name: quiet
    type: shell
    command: "true"
  - name: report
    type: node
    handler: daily-report
    enabled: true
`));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('+ create    quiet (disabled: set enabled: true, or run orrery -n ns enable quiet)');
      expect(r.stdout).toMatch(/\+ create {4}report\n/);
      expect(r.stderr).toContain("warning: jobs[1] (report): no online executor offers handler 'daily-report' (online: e1 [other])");
    } finally {
      await presence.close();
    }
  });
});

describe("apply merges as kubectl apply does", () => {
  it('keeps a field the file never set (orrery enable), and returns a field removed from the file to its default', async () => {
    const first = file(`
jobs:
  - name: merge-me
    type: shell
    command: ./run.sh
    description: the first description
    timeoutSeconds: 30
`);
    expect((await cli('apply', '-f', first)).code).toBe(0);
    expect((await cli('enable', 'merge-me')).code).toBe(0);
    // Re-applying the same file does not disable the job again: the file never set `enabled`.
    const again = await cli('apply', '-f', first);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('= unchanged merge-me');
    expect((await stored('merge-me')).enabled).toBe(true);

    // The description leaves the file: it returns to its default. `enabled` (never in the file) stays.
    const second = file(`
jobs:
  - name: merge-me
    type: shell
    command: ./run.sh
    timeoutSeconds: 30
`);
    const changed = await cli('apply', '-f', second);
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout).toContain('description: "the first description" → ""');
    const now = await stored('merge-me');
    expect(now.description).toBe('');
    expect(now.enabled).toBe(true);
    expect(now.timeoutSeconds).toBe(30);

    // A field the file sets wins over another writer's value.
    const third = file(`
jobs:
  - name: merge-me
    type: shell
    command: ./run.sh
    timeoutSeconds: 30
    enabled: false
`);
    expect((await cli('apply', '-f', third)).code).toBe(0);
    expect((await stored('merge-me')).enabled).toBe(false);
  });

  it('merges top-level fields by the rule (pure)', () => {
    const [entry] = validateJobDocument({ jobs: [{ name: 'j', type: 'shell', command: 'a', cron: '* * * * *' }] });
    const live = { ...entry!.config, enabled: true, description: 'from the console', retry: { count: 2, backoffSeconds: 1 } };
    expect(mergeApplied({ name: 'j', type: 'shell', command: 'b' }, live, { name: 'j', type: 'shell', command: 'a', cron: '* * * * *' })).toMatchObject({ command: 'b', enabled: true, description: 'from the console', retry: { count: 2, backoffSeconds: 1 } });
    expect(mergeApplied({ name: 'j', type: 'shell', command: 'b' }, live, { name: 'j', type: 'shell', command: 'a', cron: '* * * * *' })).not.toHaveProperty('cron');
    // Never applied from a file: everything not in the file keeps its live value.
    expect(mergeApplied({ name: 'j', type: 'shell', command: 'b' }, live, undefined)).toMatchObject({ cron: '* * * * *', enabled: true });
  });
});
