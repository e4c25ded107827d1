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
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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
  const info = new URL('../dist/build-info.json', binUrl);
  if (process.env.ORRERY_FROM_SOURCE !== '1' && buildIsFresh(info)) return import(new URL(`../dist/${entry.built}`, binUrl).href);
  const { register } = await import('tsx/esm/api');
  register();
  return import(new URL(entry.source, binUrl).href);
}
