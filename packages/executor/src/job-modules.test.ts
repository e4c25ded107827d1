// Job discovery runs the modules of --jobs DIR in a child process (real node, real tsx).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { describeProblems, discoverJobModules, loadJobModules } from './job-modules.js';
import { isJobFileCandidate } from './job-file-rule.js';
import { JOB_WORKER_CONDITION } from './node-pool.js';

function jobsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'orrery-jobs-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const job = (name: string, extra = ''): string => `${extra}\nexport default { name: '${name}', run: () => undefined };\n`;

describe('isJobFileCandidate', () => {
  it.each([
    ['job.ts', true], ['job.mts', true], ['job.js', true], ['job.mjs', true],
    ['job.cjs', false], ['job.json', false], ['notes.txt', false], ['types.d.ts', false], ['types.d.mts', false],
    ['job.test.ts', false], ['job.test.mjs', false], ['_shared.ts', false], ['.eslintrc.js', false],
  ])('%s → %s', (file, expected) => {
    expect(isJobFileCandidate(file)).toBe(expected);
  });
});

describe('loadJobModules', () => {
  it('learns every handler of .ts, .mts, .js and .mjs modules, skipping tests and .d.ts', async () => {
    const dir = jobsDir({
      'a.ts': `const n: string = 'typed';\n${job('alpha')}`,
      'b.mts': job('beta'),
      'c.js': job('gamma'),
      'd.mjs': job('delta'),
      'e.test.ts': 'throw new Error("a test file is not a job")',
      'f.d.ts': 'export declare const x: number;',
      'notes.txt': 'not a module',
    });
    mkdirSync(join(dir, 'sub.ts')); // a folder named like a module is not one
    const modules = await loadJobModules(dir);
    expect([...modules.keys()].sort()).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    expect(modules.get('alpha')).toBe(join(dir, 'a.ts'));
  });

  it("runs a module's top-level code in a child process, never in the executor's", async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'orrery-marker-')), 'pid');
    const dir = jobsDir({ 'side.ts': job('side', `(globalThis as any).orreryImported = true;\nimport { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, String(process.pid));`) });
    const modules = await loadJobModules(dir);
    expect([...modules.keys()]).toEqual(['side']);
    expect((globalThis as { orreryImported?: boolean }).orreryImported).toBeUndefined();
    const { readFileSync } = await import('node:fs');
    const pid = Number(readFileSync(marker, 'utf8'));
    expect(pid).toBeGreaterThan(0);
    expect(pid).not.toBe(process.pid);
  });

  it('loads the jobs of a folder beside its helpers, reporting each bad file by name and reason', async () => {
    const dir = jobsDir({
      'broken.ts': 'export default {',
      'helper.ts': 'export const x = 1;\nexport default function helper() { return 2; }',
      'badname.ts': job('no spaces allowed'),
      'proto.ts': job('__proto__'),
      'one.ts': job('twin'),
      'two.ts': job('twin'),
      'fine.ts': job('fine'),
      '_private.ts': 'throw new Error("an underscore file is never imported")',
      '.hidden.js': 'throw new Error("a dot file is never imported")',
    });
    mkdirSync(join(dir, 'lib'));
    writeFileSync(join(dir, 'lib', 'nested.ts'), job('nested')); // subfolders hold helpers, never jobs
    const folder = await discoverJobModules(dir);
    expect([...folder.modules]).toEqual([['fine', join(dir, 'fine.ts')], ['twin', join(dir, 'one.ts')]]);
    expect(folder.helpers).toEqual(['helper.ts']);
    expect(folder.problems.map((p) => p.file)).toEqual(['badname.ts', 'broken.ts', 'proto.ts', 'two.ts']);
    expect(folder.problems[1]!.reason).toMatch(/^cannot be imported: /);
    expect(describeProblems(folder.problems)).toContain("badname.ts: name 'no spaces allowed' must match ^(?!__proto__$)[A-Za-z0-9_-]{1,64}$");
    expect(describeProblems(folder.problems)).toContain("proto.ts: name '__proto__' must match");
    expect(describeProblems(folder.problems)).toContain(`two.ts: name 'twin' is also defined by ${join(dir, 'one.ts')}`);
    // loadJobModules gives the jobs and logs the rest (it refuses nothing but an unreadable folder).
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>); } });
    const modules = await loadJobModules(dir, undefined, undefined, logger);
    expect([...modules.keys()]).toEqual(['fine', 'twin']);
    expect(lines.filter((l) => l.msg === 'a file of the jobs folder is not a job').map((l) => l.file)).toEqual(['badname.ts', 'broken.ts', 'proto.ts', 'two.ts']);
    expect(lines.filter((l) => l.msg === 'a module of the jobs folder is a helper, not a job').map((l) => l.file)).toEqual(['helper.ts']);
  });

  it('says so when the folder cannot be read', async () => {
    const missing = join(tmpdir(), `orrery-no-such-dir-${process.pid}`);
    await expect(loadJobModules(missing)).rejects.toThrow(new RegExp(`^--jobs ${missing}: cannot read the folder \\(ENOENT`));
  });

  it('gives up on a module that never finishes importing', async () => {
    const dir = jobsDir({ 'hang.mts': `await new Promise(() => setInterval(() => undefined, 1000));\n${job('hang')}` });
    await expect(loadJobModules(dir, 3000)).rejects.toThrow(/no answer within 3 s/);
  });
});

describe('discovery compiles what the workers import', () => {
  const fixtures = fileURLToPath(new URL('../test/fixtures/node-pool/', import.meta.url));
  const module = join(fixtures, 'logs-lines.ts');

  /**
   * Imports `module` as a Node worker does (its export condition, tsx), with tsx's cache in `cold`
   * (its TMPDIR), and answers how many esbuild processes it had started by then: tsx starts one to
   * compile what its cache lacks, and it stays beside the process for its life.
   */
  function importAsWorker(cold: string): number {
    const script = `await import(${JSON.stringify(pathToFileURL(module).href)});
      const { readdirSync, readFileSync } = await import('node:fs');
      let n = 0;
      for (const p of readdirSync('/proc')) {
        try {
          const stat = readFileSync('/proc/' + p + '/stat', 'utf8');
          const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          if (ppid === process.pid && stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === 'esbuild') n += 1;
        } catch {}
      }
      process.stdout.write(String(n));
      process.exit(0);`;
    const out = execFileSync(process.execPath, [`--conditions=${JOB_WORKER_CONDITION}`, '--import', 'tsx', '--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH, NODE_OPTIONS: process.env.NODE_OPTIONS, HOME: process.env.HOME, TMPDIR: cold },
      encoding: 'utf8',
    });
    return Number(out);
  }

  it('a worker importing a module tsx never compiled keeps an esbuild process; after discovery it needs none', async () => {
    const cold = mkdtempSync(join(tmpdir(), 'orrery-tsx-cold-'));
    const warmed = mkdtempSync(join(tmpdir(), 'orrery-tsx-cold-'));
    try {
      // The premise: with nothing compiled, the worker compiles for itself and keeps esbuild running.
      expect(importAsWorker(cold)).toBe(1);
      const env = { PATH: process.env.PATH, NODE_OPTIONS: process.env.NODE_OPTIONS, HOME: process.env.HOME, TMPDIR: warmed };
      expect([...(await discoverJobModules(fixtures, { env })).modules.keys()]).toContain('logs-lines');
      expect(importAsWorker(warmed)).toBe(0);
    } finally {
      rmSync(cold, { recursive: true, force: true });
      rmSync(warmed, { recursive: true, force: true });
    }
  });
});
