/**
 * Hot reload of `--jobs DIR`: watches the folder (and its subfolders, where helper modules may
 * live) and, once changes settle for {@link RELOAD_DEBOUNCE_MS}, discovers its jobs again
 * (job-modules.ts) and
 * - updates `modules` in place (the map every job runtime reads a handler's module from),
 * - has the pool retire its workers ({@link NodePool.reload}), so the next run of any job imports
 *   its code as it is now — a run already running finishes on the code it started with,
 * - calls `onHandlers` with the new handler list when a job was added, removed or renamed (the
 *   executor announces it in its presence node, so the allocator sees it).
 *
 * Guarantees: every change made before a discovery starts is seen by it; changes made during one
 * trigger another after it. A folder that cannot be read keeps the jobs known before (logged).
 * Not guaranteed: changes on file systems without inotify events (some network mounts) are not
 * seen — restart the executor there.
 */
import { watch, type FSWatcher } from 'node:fs';
import { toError, type Logger } from '@orrery/core';
import { discoverJobModules, logJobFolder } from './job-modules.js';
import type { NodePool } from './node-pool.js';

/** Quiet time after the last change before the folder is read again (an editor saves in steps), ms. */
export const RELOAD_DEBOUNCE_MS = 300;
/** Files whose change may change a job: modules and JSON a module may import. */
const RELEVANT = /\.(ts|mts|cts|js|mjs|cjs|json)$/;

/** Options of {@link createJobFolderWatch}. */
export interface JobFolderWatchOptions {
  dir: string;
  /** The live handler → module map, updated in place. */
  modules: Map<string, string>;
  pool: Pick<NodePool, 'reload'>;
  logger: Logger;
  /** The environment discovery runs in (job-env.ts). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The sorted handler names, after a change of the set. */
  onHandlers?(handlers: string[]): void;
  /** After each reload (tests wait on it): the handlers now. */
  onReloaded?(handlers: string[]): void;
}

/** A running watch. */
export interface JobFolderWatch {
  /** Stops watching (idempotent); a discovery under way is killed. */
  close(): void;
}

const sameKeys = (a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean =>
  a.size === b.size && [...a.keys()].every((k) => b.has(k));

/** Starts watching `dir`. */
export function createJobFolderWatch(options: JobFolderWatchOptions): JobFolderWatch {
  const { dir, modules, pool, logger } = options;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let again = false;
  const abort = new AbortController();

  async function reload(): Promise<void> {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        try {
          const folder = await discoverJobModules(dir, { signal: abort.signal, ...(options.env ? { env: options.env } : {}) });
          if (closed) return;
          logJobFolder(logger, dir, folder);
          const changed = !sameKeys(modules, folder.modules);
          modules.clear();
          for (const [name, path] of folder.modules) modules.set(name, path);
          pool.reload(modules.values());
          const handlers = [...modules.keys()].sort();
          logger.info({ dir, handlers }, 'jobs folder reloaded');
          if (changed) options.onHandlers?.(handlers);
          options.onReloaded?.(handlers);
        } catch (error) {
          if (closed) return;
          logger.warn({ dir, err: toError(error) }, 'could not read the jobs folder again; the jobs known before stay');
        }
      } while (again && !closed);
    } finally {
      running = false;
    }
  }

  const schedule = (file: string | null): void => {
    if (closed || (file !== null && !RELEVANT.test(file))) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => { timer = undefined; void reload(); }, RELOAD_DEBOUNCE_MS);
  };

  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dir, { recursive: true, persistent: false }, (_event, file) => schedule(file === null ? null : String(file)));
  } catch {
    try {
      // No recursive watch here: top-level files only.
      watcher = watch(dir, { persistent: false }, (_event, file) => schedule(file === null ? null : String(file)));
    } catch (error) {
      logger.warn({ dir, err: toError(error) }, 'cannot watch the jobs folder: edits take effect after a restart');
    }
  }
  watcher?.on('error', (error) => logger.warn({ dir, err: toError(error) }, 'the watch of the jobs folder failed: edits take effect after a restart'));

  return {
    close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      watcher?.close();
      abort.abort();
    },
  };
}
