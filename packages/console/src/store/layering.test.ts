// The store layer stands on core alone: no store module imports the console server (its routes,
// its access rule), so the CLI and the server share the store without the store knowing either.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const IMPORT_FROM = /\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

describe('the store layer', () => {
  it('imports nothing from the server', () => {
    const offending = readdirSync(here)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .flatMap((f) => [...readFileSync(join(here, f), 'utf8').matchAll(IMPORT_FROM)].map((m) => ({ file: f, from: m[1] ?? m[2]! })))
      .filter(({ from }) => /(^|\/)server(\/|$)/.test(from));
    expect(offending).toEqual([]);
  });
});
