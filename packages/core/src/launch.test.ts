// The bins' loader: a build is used only while no source it was built from is newer.
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript without declarations (it runs before any TypeScript loader)
import { buildIsFresh } from '../launch.mjs';

const fresh = buildIsFresh as (url: URL) => boolean;

function layout(info: unknown): { dir: string; url: URL } {
  const dir = mkdtempSync(join(tmpdir(), 'orrery-launch-'));
  mkdirSync(join(dir, 'src'));
  mkdirSync(join(dir, 'dist'));
  writeFileSync(join(dir, 'src', 'a.ts'), 'export {}');
  writeFileSync(join(dir, 'src', 'b.ts'), 'export {}');
  const old = new Date(Date.now() - 60_000);
  utimesSync(join(dir, 'src', 'a.ts'), old, old);
  utimesSync(join(dir, 'src', 'b.ts'), old, old);
  const file = join(dir, 'dist', 'build-info.json');
  writeFileSync(file, typeof info === 'string' ? info : JSON.stringify(info));
  return { dir, url: pathToFileURL(file) };
}

describe('buildIsFresh', () => {
  const now = Date.now() - 30_000;
  it.each([
    ['every input older than the build', { builtAt: now, inputs: ['../src/a.ts', '../src/b.ts'] }, true],
    ['an input gone', { builtAt: now, inputs: ['../src/a.ts', '../src/gone.ts'] }, false],
    ['no inputs listed', { builtAt: now, inputs: [] }, false],
    ['no build time', { inputs: ['../src/a.ts'] }, false],
    ['not JSON', '{', false],
  ])('%s → %s', (_, info, want) => {
    expect(fresh(layout(info).url)).toBe(want);
  });

  it('is stale once a source is edited after the build', () => {
    const { dir, url } = layout({ builtAt: now, inputs: ['../src/a.ts', '../src/b.ts'] });
    expect(fresh(url)).toBe(true);
    writeFileSync(join(dir, 'src', 'b.ts'), 'export const edited = 1;');
    expect(fresh(url)).toBe(false);
  });

  it('is stale without a build', () => {
    expect(fresh(pathToFileURL(join(tmpdir(), `orrery-no-build-${process.pid}`, 'build-info.json')))).toBe(false);
  });
});
