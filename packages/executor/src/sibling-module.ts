/**
 * The path of a module beside this one that runs as a process of its own (a Node job worker, job
 * discovery). From sources it is the `.ts` file (run with `--import tsx`); from the bundled build
 * (dist/, see packages/it/scripts/build.mjs) the `.js` file the build wrote beside the bundle.
 */
export function siblingModule(importMetaUrl: string, name: string): URL {
  return new URL(`./${name}${importMetaUrl.endsWith('.ts') ? '.ts' : '.js'}`, importMetaUrl);
}
