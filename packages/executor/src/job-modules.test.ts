// Job discovery runs the modules of --jobs DIR in a child process (real node, real tsx).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJobModules } from './job-modules.js';

function jobsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'orrery-jobs-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const job = (name: string, extra = ''): string => `${extra}\nexport default { name: '${name}', run: () => undefined };\n`;

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

  it('refuses the folder naming every bad file and the rule it breaks', async () => {
    const dir = jobsDir({
      'broken.ts': 'export default {',
      'empty.ts': 'export const x = 1;',
      'badname.ts': job('no spaces allowed'),
      'one.ts': job('twin'),
      'two.ts': job('twin'),
      'fine.ts': job('fine'),
    });
    const error = await loadJobModules(dir).then(() => undefined, (e: Error) => e);
    expect(error?.message).toContain(`--jobs ${dir}: `);
    expect(error?.message).toMatch(/broken\.ts: cannot be imported: /);
    expect(error?.message).toContain('empty.ts: its default export must be defineJob({ name, run })');
    expect(error?.message).toContain("badname.ts: name 'no spaces allowed' must match ^[A-Za-z0-9_-]{1,64}$");
    expect(error?.message).toContain(`two.ts: name 'twin' is also defined by ${join(dir, 'one.ts')}`);
    expect(error?.message).not.toContain('fine.ts');
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
