// Applies Orrery's patch to the `zookeeper` package and rebuilds its native addon from the patched
// source. Run by `postinstall` (after `npm ci` built the unpatched addon) and by prepare.sh; a second
// run neither patches nor builds.
//
// The patch (patches/zookeeper+*.patch, applied with patch-package) fixes how the addon drives libuv
// when the C client closes its socket (a link it gives up on, a request whose send fails): unpatched,
// the poll handle outlives the socket's descriptor number, and a process that opens other sockets
// meanwhile can abort or crash in libuv, or lose one of them (docs/architecture.md, "A lost link must
// not take another socket's place"; test: packages/core/src/zk/addon.test.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const require = createRequire(join(root, 'packages/core/package.json'));

function run(what, command, args, cwd) {
  const r = spawnSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(`${r.stdout ?? ''}${r.stderr ?? ''}`);
    console.error(`orrery: ${what} failed (exit ${r.status ?? r.signal}).`);
    process.exit(1);
  }
  return r.stdout;
}

// 1. The patch. patch-package leaves a patched file alone, and refuses a patch that does not apply.
const patchPackage = join(dirname(require.resolve('patch-package/package.json')), 'index.js');
run('patching the zookeeper package (patch-package)', process.execPath, [patchPackage, '--error-on-fail'], root);

// 2. The addon, when its source is newer than its build.
const pkg = dirname(require.resolve('zookeeper/package.json'));
const source = join(pkg, 'src/node-zk.cpp');
const addon = join(pkg, 'build/Release/zookeeper.node');
if (existsSync(addon) && statSync(addon).mtimeMs >= statSync(source).mtimeMs) process.exit(0);

// node-gyp comes with npm: npm names it to the scripts it runs; otherwise it sits beside npm.
const nodeGyp = [
  process.env.npm_config_node_gyp,
  join(dirname(process.execPath), '../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js'),
].find((p) => p && existsSync(p));
if (!nodeGyp) {
  console.error('orrery: cannot find node-gyp (it comes with npm) to rebuild the zookeeper addon.');
  process.exit(1);
}
const started = Date.now();
run('rebuilding the zookeeper addon (node-gyp build)', process.execPath, [nodeGyp, 'build'], pkg);
if (!existsSync(addon) || statSync(addon).mtimeMs < statSync(source).mtimeMs) {
  console.error(`orrery: node-gyp left ${addon} older than its patched source.`);
  process.exit(1);
}
console.error(`orrery: rebuilt the zookeeper addon with Orrery's patch in ${Date.now() - started} ms`);
