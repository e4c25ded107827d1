// Bundles each bin's TypeScript into JavaScript under its package's dist/ (esbuild; no type check —
// `tsc` does that). The bins run these bundles while they are fresh (packages/core/launch.mjs):
// build-info.json records when the build started and every source file it read.
//
// Third-party packages stay outside the bundles (imported from node_modules as usual); the
// workspace's own packages (@orrery/*) are bundled in.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const PACKAGES = ['core', 'sharding', 'executor', 'console', 'console-ui', 'it'];

const TARGETS = [
  { pkg: 'executor', entries: { main: 'src/main.ts', 'node-worker': 'src/node-worker.ts', 'job-discovery': 'src/job-discovery.ts' }, copy: ['src/fence-guard.mjs'] },
  { pkg: 'sharding', entries: { main: 'src/main.ts' }, copy: [] },
  { pkg: 'console', entries: { cli: 'src/cli/main.ts', server: 'src/server/main.ts' }, copy: [] },
];

/** Every third-party dependency of the workspace: left to node_modules. */
function externals() {
  const names = new Set();
  for (const pkg of PACKAGES) {
    let manifest;
    try {
      manifest = JSON.parse(readFileSync(join(ROOT, 'packages', pkg, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })) {
      if (!name.startsWith('@orrery/')) names.add(name);
    }
  }
  return [...names].flatMap((n) => [n, `${n}/*`]);
}

const started = Date.now();
const external = externals();
await Promise.all(TARGETS.map(async ({ pkg, entries, copy }) => {
  const dir = join(ROOT, 'packages', pkg);
  const out = join(dir, 'dist');
  const staging = join(dir, `.dist-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const builtAt = Date.now();
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(Object.entries(entries).map(([name, src]) => [name, join(dir, src)])),
    outdir: staging,
    outExtension: { '.js': '.js' },
    bundle: true,
    platform: 'node',
    // The workspace's packages from their TypeScript sources (their `default` export is the lib/
    // build of a packed package; packages/it/scripts/build-lib.mjs).
    conditions: ['@orrery/source'],
    format: 'esm',
    target: 'node20',
    external,
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  for (const file of copy) copyFileSync(join(dir, file), join(staging, file.split('/').at(-1)));
  const inputs = Object.keys(result.metafile.inputs)
    .filter((p) => !p.includes('node_modules/'))
    .concat(copy.map((f) => relative(ROOT, join(dir, f))))
    .map((p) => relative(out, join(ROOT, p)));
  writeFileSync(join(staging, 'build-info.json'), JSON.stringify({ builtAt, inputs }, null, 2) + '\n');
  // Swap in the whole folder at once: a bin starting meanwhile sees the old build or the new one.
  rmSync(out, { recursive: true, force: true });
  renameSync(staging, out);
}));
console.error(`orrery: built ${TARGETS.map((t) => `packages/${t.pkg}/dist`).join(', ')} in ${Date.now() - started} ms`);
