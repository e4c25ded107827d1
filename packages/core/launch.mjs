// How Orrery's bins load their code (plain JavaScript: it runs before any TypeScript loader).
//
// `npm start`, `npm test` and `npm run bench` bundle each bin's TypeScript into one JavaScript file
// under its package's dist/ (packages/it/scripts/build.mjs). A bin runs that bundle when it is up
// to date with every source file it was built from, and otherwise the TypeScript sources through
// tsx — so an edited source is never shadowed by a stale build. The bundle saves the process
// about 40 MB: no loader thread, and none of the per-function property arrays tsx's `keepNames`
// adds to every closure.
//
// ORRERY_FROM_SOURCE=1 always runs the sources.
//
// In a checkout (the bin not under node_modules) the @orrery/* packages resolve to their sources
// through the "@orrery/source" export condition (their `default` is the lib/ build of a packed
// package): set here for this process when it runs the sources, and in NODE_OPTIONS for the
// processes it starts (the Node job workers import the checkout's job modules).
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { register } from 'node:module';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The export condition under which the workspace's packages resolve to their TypeScript sources. */
export const SOURCE_CONDITION = '@orrery/source';
const SOURCE_CONDITION_HOOK = `data:text/javascript,${encodeURIComponent(
  `export function resolve(s, c, next) { return next(s, c.conditions.includes(${JSON.stringify(SOURCE_CONDITION)}) ? c : { ...c, conditions: [...c.conditions, ${JSON.stringify(SOURCE_CONDITION)}] }); }`,
)}`;

/** True when `binUrl` is a checkout's bin rather than an installed package's. */
function inCheckout(binUrl) {
  try {
    return !realpathSync(fileURLToPath(binUrl)).split(sep).includes('node_modules');
  } catch {
    return false;
  }
}

/** True when `dist/build-info.json` beside `binUrl`'s package lists sources none newer than the build. */
export function buildIsFresh(infoUrl) {
  try {
    const info = JSON.parse(readFileSync(infoUrl, 'utf8'));
    if (typeof info.builtAt !== 'number' || !Array.isArray(info.inputs) || info.inputs.length === 0) return false;
    for (const input of info.inputs) {
      if (statSync(fileURLToPath(new URL(input, infoUrl))).mtimeMs > info.builtAt) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * Imports a bin's entry module: `dist/<built>` of the bin's package when fresh, else `source`
 * (relative to the bin) through tsx.
 * @param {string} binUrl the bin's `import.meta.url`
 * @param {{ built: string, source: string }} entry
 */
export async function loadEntry(binUrl, entry) {
  const checkout = inCheckout(binUrl);
  const flag = `--conditions=${SOURCE_CONDITION}`;
  if (checkout && !(process.env.NODE_OPTIONS ?? '').split(/\s+/).includes(flag)) {
    process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, flag].filter(Boolean).join(' ');
  }
  const info = new URL('../dist/build-info.json', binUrl);
  if (process.env.ORRERY_FROM_SOURCE !== '1' && buildIsFresh(info)) return import(new URL(`../dist/${entry.built}`, binUrl).href);
  const tsx = await import('tsx/esm/api');
  tsx.register();
  if (checkout) register(SOURCE_CONDITION_HOOK);
  return import(new URL(entry.source, binUrl).href);
}
