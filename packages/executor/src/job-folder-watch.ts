/**
 * Hot reload of `--jobs DIR`: watches the folder (and its subfolders, where helper modules may
 * live — but not `node_modules` nor hidden ones) and, once changes settle for {@link RELOAD_DEBOUNCE_MS}, discovers its jobs again
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
import { readdirSync, watch, type Dirent, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { toError, type Logger } from '@orrery/core';
import { discoverJobModules, logJobFolder } from './job-modules.js';
import type { NodePool } from './node-pool.js';

/** Quiet time after the last change before the folder is read again (an editor saves in steps), ms. */
export const RELOAD_DEBOUNCE_MS = 300;
/**
 * Subfolders not watched: installed dependencies (thousands of files, changed by `npm install`,
 * after which a touch of a job file reloads) and hidden ones (`.git`).
 */
const SKIPPED_FOLDER = /^(node_modules$|\.)/;
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
          syncWatchers();
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
    // (A new subfolder shows up as a change without a relevant extension: watch it too.)
    if (file !== null && !RELEVANT.test(file)) syncWatchers();
    if (closed || (file !== null && !RELEVANT.test(file))) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => { timer = undefined; void reload(); }, RELOAD_DEBOUNCE_MS);
  };

  /** Path → its watcher: the folder itself (top level), and each subfolder but the skipped ones (whole). */
  const watchers = new Map<string, FSWatcher>();
  let warned = false;
  const open = (path: string, recursive: boolean): void => {
    if (watchers.has(path)) return;
    try {
      const w = watch(path, { recursive, persistent: false }, (_event, file) => schedule(file === null ? null : String(file)));
      w.on('error', () => { w.close(); watchers.delete(path); });
      watchers.set(path, w);
    } catch (error) {
      if (recursive) open(path, false); // no recursive watch here: its top level only
      else if (!warned) {
        warned = true;
        logger.warn({ dir, path, err: toError(error) }, 'cannot watch the jobs folder: edits take effect after a restart');
      }
    }
  };
  /** Watches the folder and its subfolders as they are now (called again after each reload). */
  const syncWatchers = (): void => {
    if (closed) return;
    open(dir, false);
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    const now = new Set<string>([dir]);
    for (const e of entries) {
      if (!e.isDirectory() || SKIPPED_FOLDER.test(e.name)) continue;
      const path = join(dir, e.name);
      now.add(path);
      open(path, true);
    }
    for (const [path, w] of watchers) {
      if (!now.has(path)) {
        w.close();
        watchers.delete(path);
      }
    }
  };
  syncWatchers();

  return {
    close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      for (const w of watchers.values()) w.close();
      watchers.clear();
      abort.abort();
    },
  };
}
