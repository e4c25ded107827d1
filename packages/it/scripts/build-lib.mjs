// Builds the published form of @orrery packages — JavaScript and declarations in each package's
// lib/ (tsc -p tsconfig.build.json) — for `npm pack` (the packages' prepack scripts run it).
// Inside the repository nothing loads lib/: the "@orrery/source" export condition leads every tool
// to src/. lib/ is separate from dist/ (the bins' bundles, packages/it/scripts/build.mjs).
//
//   node packages/it/scripts/build-lib.mjs core executor   (in dependency order)
import { execFileSync } from 'node:child_process';
import { copyFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** Packages with a tsconfig.build.json. */
const BUILDABLE = new Set(['core', 'executor']);
const tsc = createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');

const names = process.argv.slice(2);
if (names.length === 0 || names.some((n) => !BUILDABLE.has(n))) {
  console.error(`usage: build-lib.mjs PACKAGE... (of ${[...BUILDABLE].join(', ')})`);
  process.exit(2);
}
for (const name of names) {
  const dir = join(ROOT, 'packages', name);
  const started = Date.now();
  rmSync(join(dir, 'lib'), { recursive: true, force: true });
  execFileSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.build.json')], { stdio: 'inherit' });
  // Plain JavaScript modules beside the sources (the executor's fence guard) are loaded by path.
  for (const file of readdirSync(join(dir, 'src')).filter((f) => f.endsWith('.mjs'))) {
    copyFileSync(join(dir, 'src', file), join(dir, 'lib', file));
  }
  console.error(`orrery: built packages/${name}/lib in ${Date.now() - started} ms`);
}
