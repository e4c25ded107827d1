/**
 * A throwaway Redis for benchmarks and tests (the BullMQ comparison), started from Debian's
 * `redis-server`.
 *
 * Guarantees:
 * - It listens on 127.0.0.1 only, on a free port found at start (6379 is never assumed), with its
 *   own temporary dir (working dir and log) and no persistence (`--save '' --appendonly no`).
 * - {@link startRedis} resolves only once the server answers `PING` with `PONG`.
 * - `stop()` stops it by pid (SIGTERM, SIGKILL after a grace) and removes its dir.
 * - It does not outlive the process that started it: a small watchdog shell holds a pipe from this
 *   process on its stdin and kills the server (and removes the dir) when the pipe closes, which
 *   the kernel does when this process dies, even by `kill -9`.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@orrery/core/testing';

/** Debian's Redis server binary. */
export const REDIS_SERVER_BIN = '/usr/bin/redis-server';

/** How {@link startRedis} starts a server. */
export interface RedisOptions {
  /** The server binary. Default {@link REDIS_SERVER_BIN}. */
  bin?: string;
  /** How long to wait for `PONG`, in ms. Default 15 000. */
  startTimeoutMs?: number;
  /** Parent folder of the server's own temporary dir. Default the OS temp dir. */
  baseDir?: string;
  /** More `--name value` arguments for the server, after the defaults (which they may override), e.g. `['--hz', '100']`. */
  extraArgs?: readonly string[];
}

/** One running Redis server. */
export interface RedisServer {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** `redis://127.0.0.1:port`. */
  readonly url: string;
  readonly pid: number;
  /** The server's working dir (holds `redis.log`); removed by `stop()`. */
  readonly dir: string;
  readonly logFile: string;
  /** True while the server process runs. */
  readonly running: boolean;
  /** SIGTERM by pid, SIGKILL after `graceMs` (default 5 000); removes the dir. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

// Waits for its stdin to close (this process stopped it or died), then kills the server and
// removes its dir. stop() kills this shell first, so it never acts on a pid that may be reused.
const WATCHDOG = `
trap '' TERM INT HUP
while read -r _; do :; done
kill -KILL "$ORRERY_REDIS_PID" 2>/dev/null
rm -rf "$ORRERY_REDIS_DIR"
`;

/**
 * Sends `PING` to a Redis at `host:port`; resolves true on `+PONG`, false on anything else, an
 * error or no answer within `timeoutMs`.
 */
export function pingRedis(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let answer = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
    socket.connect(port, host, () => socket.write('PING\r\n'));
  });
}

/** `redis-server --version`'s line, e.g. `Redis server v=7.0.15 sha=… malloc=jemalloc-5.3.0 bits=64 build=…`. */
export function redisServerVersion(bin = REDIS_SERVER_BIN): string {
  return execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
}

function readTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
}

async function waitForPong(port: number, child: ChildProcess, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    if (await pingRedis(port)) return true;
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 200);
  }
  return false;
}

async function launch(bin: string, dir: string, timeoutMs: number, extraArgs: readonly string[]): Promise<RedisServer> {
  const port = await freePort();
  const logFile = join(dir, 'redis.log');
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--logfile', logFile, '--save', '', '--appendonly', 'no', '--daemonize', 'no', ...extraArgs];
  // A process group of its own: a terminal's Ctrl-C must not end it before the processes using it.
  const child = spawn(bin, args, { stdio: 'ignore', detached: true });
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${bin}`);
  const pid = child.pid;
  let running = true;
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    running = false;
    resolve();
  }));
  const watchdog = spawn('bash', ['-c', WATCHDOG], { stdio: ['pipe', 'ignore', 'ignore'], env: { ...process.env, ORRERY_REDIS_PID: String(pid), ORRERY_REDIS_DIR: dir } });
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void }).unref?.();
  let stopped = false;
  const server: RedisServer = {
    host: '127.0.0.1',
    port,
    url: `redis://127.0.0.1:${port}`,
    pid,
    dir,
    logFile,
    get running() {
      return running;
    },
    async stop(graceMs = 5000) {
      if (stopped) return;
      stopped = true;
      if (watchdog.pid !== undefined) {
        try {
          process.kill(watchdog.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      if (running) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
        const timer = setTimeout(() => {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }, graceMs);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  if (!(await waitForPong(port, child, timeoutMs))) {
    const tail = readTail(logFile);
    const raced = !running && /Address already in use|bind/i.test(tail);
    await server.stop(1000);
    throw Object.assign(new Error(`redis-server on 127.0.0.1:${port} did not answer PING within ${timeoutMs} ms; log:\n${tail}`), { portRace: raced });
  }
  return server;
}

/**
 * Starts a Redis server (see the module's guarantees) and resolves once it answers `PING`. A port
 * taken between finding it and the server binding it is tried again with another, up to 3 times.
 */
export async function startRedis(options: RedisOptions = {}): Promise<RedisServer> {
  const bin = options.bin ?? REDIS_SERVER_BIN;
  const timeoutMs = options.startTimeoutMs ?? 15_000;
  for (let attempt = 1; ; attempt += 1) {
    const dir = mkdtempSync(join(options.baseDir ?? tmpdir(), 'orrery-redis-'));
    try {
      return await launch(bin, dir, timeoutMs, options.extraArgs ?? []);
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      if (attempt >= 3 || !(error as { portRace?: boolean }).portRace) throw error;
    }
  }
}
