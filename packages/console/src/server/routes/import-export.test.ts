// Import and export against a real ZooKeeper: the `orrery apply` document in YAML or JSON, a dry run
// that answers the diff per job (create, update with field changes, replace of a broken job,
// unchanged) and writes nothing, an import that writes through the CLI's code path (history
// author: the caller), and every rejected body a 400 naming the field and the rule.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { paths } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { parse as parseYaml } from 'yaml';
import { createNamespace } from '../../store/namespaces.js';
import { listJobHistory } from '../../store/job-history.js';
import { exportFormat } from './import-export.js';
import { startTestConsole, type TestConsole } from './job-test-support.js';

const zkConnect = inject('zkConnect');
let c: TestConsole;
const base = '/api/v1/namespaces/shop';

/** Every node under the namespace and the history, with its version: what a rejected request must leave alone. */
async function tree(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const walk = async (path: string): Promise<void> => {
    const stat = await c.zk.exists(path);
    if (!stat) return;
    out[path] = stat.version;
    for (const child of await c.zk.getChildren(path)) await walk(`${path}/${child}`);
  };
  await walk(paths.namespace('shop'));
  await walk(paths.consoleHistory());
  return out;
}

beforeAll(async () => {
  c = await startTestConsole(zkConnect, 'import-export');
  await createNamespace(c.zk, 'shop');
  await eventually(() => expect(c.cache.namespace('shop')).toBeDefined());
  for (const name of ['alpha', 'beta']) {
    const r = await c.as('ann', { method: 'POST', url: `${base}/jobs`, payload: { name, type: 'shell', command: `echo ${name}`, cron: '0 * * * *' } });
    expect(r.statusCode).toBe(201);
  }
  await c.zk.create(paths.job('shop', 'gamma'), Buffer.from('not json'));
  await eventually(() => expect(c.cache.jobNames('shop')).toEqual(['alpha', 'beta', 'gamma']));
});
afterAll(async () => {
  await c.close();
});

describe('export', () => {
  it('answers the apply document in JSON or YAML (format=, else Accept), naming the broken jobs it leaves out', async () => {
    const json = await c.as('vic', { method: 'GET', url: `${base}/export` });
    expect(json.statusCode).toBe(200);
    expect(json.headers['content-type']).toContain('application/json');
    expect(json.headers['orrery-broken-jobs']).toBe('gamma');
    expect(json.json().jobs.map((j: { name: string }) => j.name)).toEqual(['alpha', 'beta']);
    expect(json.json().jobs[0]).toMatchObject({ name: 'alpha', type: 'shell', command: 'echo alpha', enabled: false });
    const yaml = await c.as('vic', { method: 'GET', url: `${base}/export`, headers: { accept: 'application/yaml' } });
    expect(yaml.headers['content-type']).toContain('application/yaml');
    expect(parseYaml(yaml.body)).toEqual(json.json());
    expect((await c.as('vic', { method: 'GET', url: `${base}/export?format=yaml`, headers: { accept: 'application/json' } })).headers['content-type']).toContain('yaml');
    expect((await c.as('vic', { method: 'GET', url: `${base}/export?format=xml` })).statusCode).toBe(400);
    expect((await c.as(undefined, { method: 'GET', url: `${base}/export` })).statusCode).toBe(401);
    expect((await c.as('root', { method: 'GET', url: '/api/v1/namespaces/nowhere/export' })).statusCode).toBe(404);
  });

  it.each([
    [undefined, undefined, 'json'],
    [undefined, 'text/yaml;q=0.9, application/json', 'yaml'],
    ['json', 'application/yaml', 'json'],
    [undefined, '*/*', 'json'],
  ] as const)('format %s with Accept %s is %s', (format, accept, expected) => {
    expect(exportFormat(format, accept)).toBe(expected);
  });
});

describe('import', () => {
  it('a dry run answers the diff per job and writes nothing', async () => {
    const before = await tree();
    const document = {
      jobs: [
        { name: 'alpha', type: 'shell', command: 'echo alpha', cron: '0 * * * *' },
        { name: 'beta', type: 'shell', command: 'echo beta', cron: '30 * * * *' },
        { name: 'gamma', type: 'shell', command: 'echo gamma' },
        { name: 'delta', type: 'shell', command: 'echo delta', enabled: true },
      ],
    };
    const dry = await c.as('ann', { method: 'POST', url: `${base}/import?dryRun=true`, payload: document });
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.json()).toEqual({
      dryRun: true,
      changes: [
        { name: 'alpha', action: 'unchanged', enabled: false },
        { name: 'beta', action: 'update', enabled: false, changes: [{ field: 'cron', before: '0 * * * *', after: '30 * * * *' }] },
        { name: 'gamma', action: 'replace', enabled: false, problem: expect.stringContaining('not valid JSON') },
        { name: 'delta', action: 'create', enabled: true },
      ],
    });
    expect(await tree()).toEqual(before);
    expect(c.audited.filter((a) => a.action === 'namespace.import')).toEqual([]);
  });

  it('imports a YAML document through the CLI code path: written, history by the caller, audited', async () => {
    const yaml = 'jobs:\n  - name: beta\n    type: shell\n    command: echo beta\n    cron: "30 * * * *"\n  - name: gamma\n    type: shell\n    command: echo gamma\n  - name: delta\n    type: shell\n    command: echo delta\n';
    const r = await c.as('ann', { method: 'POST', url: `${base}/import`, payload: yaml, headers: { 'content-type': 'application/yaml' } });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ dryRun: false, result: { written: ['beta', 'gamma', 'delta'], unchanged: [], conflicts: [] } });
    expect(JSON.parse((await c.zk.get(paths.job('shop', 'beta'))).data!.toString()).cron).toBe('30 * * * *');
    expect(await c.zk.exists(paths.jobLastApplied('shop', 'delta'))).not.toBeNull();
    expect((await listJobHistory(c.zk, 'shop', 'beta')).map((v) => ('author' in v ? [v.version, v.author] : v))).toEqual([[1, 'ann'], [0, 'ann']]);
    expect((await listJobHistory(c.zk, 'shop', 'gamma')).map((v) => ('author' in v ? [v.version, v.author] : v))).toEqual([[1, 'ann']]);
    expect(c.audited.at(-1)).toMatchObject({ action: 'namespace.import', namespace: 'shop', details: { written: ['beta', 'gamma', 'delta'] } });
    // An export imported again changes nothing.
    await eventually(() => expect(c.cache.job('shop', 'delta')).toBeDefined());
    const exported = (await c.as('vic', { method: 'GET', url: `${base}/export` })).json();
    const again = await c.as('ann', { method: 'POST', url: `${base}/import?dryRun=true`, payload: exported });
    expect(again.json().changes.map((ch: { action: string }) => ch.action)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged']);
  });

  it('rejects bad documents with a 400 naming the field and the rule, and writes nothing; a viewer or operator gets 403', async () => {
    const before = await tree();
    const cases: Array<[string, { payload: string | object; type?: string }, Array<[string, string]>]> = [
      ['malformed JSON', { payload: '{"jobs": [', type: 'application/json' }, [['body', 'json']]],
      ['malformed YAML', { payload: 'jobs: [\n  - {name: x', type: 'application/yaml' }, [['body', 'yaml']]],
      ['not a document', { payload: [1, 2] }, [['', 'type']]],
      ['unknown top-level field', { payload: { jobs: [], kind: 'List' } }, [['kind', 'unknown-field']]],
      ['every problem of every job', { payload: { jobs: [{ name: 'x/y', type: 'shell', command: 'a' }, { name: 'ok', type: 'shell', command: 'b', cron: 'soon', downstream: ['ghost'] }] } }, [['jobs[0].name', 'pattern'], ['jobs[1].cron', 'cron'], ['jobs[1].downstream[0]', 'unknown-job']]],
    ];
    for (const [what, body, expected] of cases) {
      const r = await c.as('ann', { method: 'POST', url: `${base}/import`, payload: body.payload as string, headers: body.type ? { 'content-type': body.type } : {} });
      expect(r.statusCode, what).toBe(400);
      expect(r.json().error.details.issues.map((i: { field: string; rule: string }) => [i.field, i.rule]), what).toEqual(expect.arrayContaining(expected));
    }
    expect((await c.as('ann', { method: 'POST', url: `${base}/import?dryRun=maybe`, payload: { jobs: [] } })).statusCode).toBe(400);
    expect((await c.as('ann', { method: 'POST', url: `${base}/import`, payload: 'jobs: []', headers: { 'content-type': 'text/csv' } })).statusCode).toBe(415);
    expect((await c.as('vic', { method: 'POST', url: `${base}/import`, payload: { jobs: [] } })).statusCode).toBe(403);
    expect((await c.as('oli', { method: 'POST', url: `${base}/import`, payload: { jobs: [] } })).statusCode).toBe(403);
    expect(await tree()).toEqual(before);
  });
});

describe('import from Saturn (from=saturn)', () => {
  const EXPORT = [
    { jobName: 'settle', jobType: 'SHELL_JOB', cron: '0 */5 * * * ?', shardingTotalCount: 2, shardingItemParameters: '0=echo east,1=echo west', enabled: true, rerun: true },
    { jobName: 'legacy', jobType: 'JAVA_JOB', jobClass: 'com.shop.Legacy' },
  ];

  it('answers what it refuses, what it cannot carry over and the diff; then imports the shell jobs disabled', async () => {
    const before = await tree();
    const dry = await c.as('ann', { method: 'POST', url: `${base}/import?from=saturn&dryRun=true`, payload: EXPORT });
    expect(dry.statusCode).toBe(200);
    expect(dry.json()).toMatchObject({
      dryRun: true,
      saturn: {
        refused: [{ job: 'legacy', reason: expect.stringContaining('Java class') }],
        notes: expect.arrayContaining([{ job: 'settle', field: 'rerun', note: expect.stringContaining('not carried over') }, { job: 'settle', field: 'enabled', note: expect.stringContaining('imported disabled') }]),
      },
      changes: [{ name: 'settle', action: 'create', enabled: false }],
    });
    expect(await tree()).toEqual(before);
    const real = await c.as('ann', { method: 'POST', url: `${base}/import?from=saturn`, payload: EXPORT });
    expect(real.json()).toMatchObject({ dryRun: false, result: { written: ['settle'], conflicts: [] } });
    await eventually(() => expect((c.cache.job('shop', 'settle')?.config as { value?: unknown } | undefined)?.value).toMatchObject({ type: 'shell', enabled: false, command: 'eval "$ORRERY_SHARD_PARAM"', shardingItemParameters: { 0: 'echo east', 1: 'echo west' } }));
  });

  it('a body that is no Saturn export is a 400 naming the rule, and writes nothing', async () => {
    const before = await tree();
    const r = await c.as('ann', { method: 'POST', url: `${base}/import?from=saturn`, payload: { jobs: 3 } });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.details.issues).toEqual([expect.objectContaining({ rule: 'type', message: expect.stringContaining('JSON list of Saturn job configs') })]);
    expect((await c.as('ann', { method: 'POST', url: `${base}/import?from=xxl`, payload: [] })).statusCode).toBe(400);
    expect(await tree()).toEqual(before);
  });
});
