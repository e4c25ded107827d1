/**
 * A real ZooKeeper for development, tests and benchmarks, started from Debian's jars
 * (`/usr/share/java/zookeeper.jar`, installed by `scripts/ensure-zookeeper.sh`).
 *
 * Guarantees:
 * - Each server listens on free loopback ports found at start (2181 is never assumed), with its
 *   own temporary data dir; `stop()` stops it by pid and removes the data dir.
 * - `start` resolves only once every server answers `ruok` with `imok` (an ensemble: once `srvr`
 *   also reports a mode, i.e. a quorum formed).
 * - No server outlives the process that started it (nor does its data dir): a small watchdog shell
 *   per server kills it and removes the data when the watchdog's stdin (a pipe from this process)
 *   closes, which the kernel does when this process dies, even by `kill -9`.
 *
 * Not guaranteed: durability across `stop()` (the data dir is removed) — use `restart()`, which
 * keeps it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, mkdirSync, openSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OrreryError } from '../errors.js';
import { ZK_SERVER_MAX_BUFFER } from '../zk/client.js';

const ZK_JAR = '/usr/share/java/zookeeper.jar';
const LOGGER_JAR = '/usr/share/java/slf4j-simple.jar';

/** Options of {@link startZooKeeper} and {@link startEnsemble}. */
export interface ZooKeeperOptions {
  /** ZooKeeper's tick in ms; the minimum session timeout is 2 ticks. Default 250. */
  tickTimeMs?: number;
  /** How long to wait for the server(s) to answer, in ms. Default 30 000. */
  startTimeoutMs?: number;
  /** Parent folder of the data dir. Default the OS temp dir. */
  baseDir?: string;
  /** ZooKeeper's own log level (`error`, `warn`, `info`). Default `warn`. */
  logLevel?: 'error' | 'warn' | 'info';
  /**
   * Start fast (the JVM's quick C1 compiler only, a small heap): right for tests. Benchmarks pass
   * false for the JVM's full JIT, as production runs. Default true.
   */
  fastStart?: boolean;
  /** The server's `jute.maxbuffer` in bytes (the largest request it accepts). Default {@link ZK_SERVER_MAX_BUFFER}. */
  juteMaxBuffer?: number;
  /**
   * Standalone only: keep the server's files (data, config, log) in this folder — created if
   * missing, reused by a later start with the same folder, and never removed (not by `stop()`, not
   * when this process dies). For `npm start`'s local platform, whose jobs must outlive a restart.
   * Default: a fresh temporary folder, removed at stop.
   */
  dir?: string;
  /** Standalone only: listen on this port; the start fails if it is taken. Default: a free port. */
  clientPort?: number;
  /**
   * The address the client port binds: `0.0.0.0` also takes clients from other network namespaces
   * (the across-hosts test), through the host's own addresses. Default `127.0.0.1`. The peers of an
   * ensemble always talk over loopback; `connectString` stays `127.0.0.1:port`.
   */
  clientBind?: string;
}

/** One running ZooKeeper server. */
export interface ZooKeeperServer {
  /** `127.0.0.1:port` of this server. */
  readonly connectString: string;
  readonly clientPort: number;
  /** The pid of the Java process (changes after `restart()`). */
  readonly pid: number;
  readonly dataDir: string;
  /** The path of this server's log file. */
  readonly logFile: string;
  /** True while the Java process runs. */
  readonly running: boolean;
  /** Sends a four-letter word (`ruok`, `srvr`, `mntr`, `cons`, …) and returns the answer. */
  fourLetter(word: string): Promise<string>;
  /** `srvr`'s Mode line: `standalone`, `leader` or `follower`; undefined if it does not answer. */
  mode(): Promise<string | undefined>;
  /** The server's last zxid (`srvr`'s Zxid), as a number. */
  zxid(): Promise<number>;
  /** Kills the process with `signal` (default SIGKILL) and waits for it to exit; keeps the data. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the process again on the same ports and data dir (after `kill`). */
  restart(): Promise<void>;
  /** Stops the process (SIGTERM, then SIGKILL) and removes the data dir. Idempotent. */
  stop(): Promise<void>;
}

/** A 3-node (or n-node) ensemble on loopback. */
export interface ZooKeeperEnsemble {
  /** All members' client addresses, comma-separated. */
  readonly connectString: string;
  readonly servers: readonly ZooKeeperServer[];
  /** The member that is the quorum leader now. */
  leader(): Promise<ZooKeeperServer>;
  /** Resolves once a quorum has formed again (some member is leader and the rest answer). */
  waitForQuorum(timeoutMs?: number): Promise<void>;
  /** Stops every member and removes their data. Idempotent. */
  stop(): Promise<void>;
}

/** Finds a free TCP port on 127.0.0.1 (the kernel picks; we release it right away). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Sends a ZooKeeper four-letter word to `host:port`; resolves with the whole answer. */
export function fourLetterWord(port: number, word: string, timeoutMs = 2000, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer to '${word}' from ${host}:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => { answer += chunk; });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.connect(port, host, () => socket.end(word));
  });
}

function assertInstalled(): void {
  if (!existsSync(ZK_JAR)) {
    throw new OrreryError(
      'internal',
      `ZooKeeper is not installed (${ZK_JAR} is missing): run 'bash packages/it/scripts/ensure-zookeeper.sh' (npm test does this for you)`,
    );
  }
}

interface MemberPlan {
  id: number;
  clientPort: number;
  peerPort?: number;
  electionPort?: number;
}

// The watchdog: one small shell per server, holding a pipe from this process on its stdin. When the
// pipe closes — at stop(), or because this process died, even by kill -9 — it kills the server
// (whose pid it reads from a file, so restarts are covered) and removes the data dir.
const WATCHDOG = `
trap '' TERM INT HUP
while read -r _; do :; done
pid=$(cat "$ORRERY_ZK_PIDFILE" 2>/dev/null)
if [ -n "$pid" ]; then
  kill -KILL "$pid" 2>/dev/null
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
fi
rm -rf "$ORRERY_ZK_DIR"
`;

function readTail(logFile: string): string {
  try {
    return readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return ''; // no log yet
  }
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string, logFile: string, alive: () => boolean = () => true): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 25;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    // A server that exited will not become ready: say so now, not at the deadline.
    if (!alive()) break;
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 200);
  }
  throw new OrreryError('timeout', `ZooKeeper did not become ready (${what}) within ${timeoutMs} ms; log tail:\n${readTail(logFile)}`);
}

function launchMember(plan: MemberPlan, members: MemberPlan[], dir: string, options: ResolvedOptions, keep = false): ZooKeeperServer {
  const dataDir = join(dir, `server-${plan.id}`);
  mkdirSync(join(dataDir, 'data'), { recursive: true });
  const cfg = [
    `tickTime=${options.tickTimeMs}`,
    `initLimit=20`,
    `syncLimit=10`,
    `dataDir=${join(dataDir, 'data')}`,
    `clientPort=${plan.clientPort}`,
    `clientPortAddress=${options.clientBind}`,
    `admin.enableServer=false`,
    `4lw.commands.whitelist=*`,
    `maxClientCnxns=0`,
    `minSessionTimeout=${2 * options.tickTimeMs}`,
    `maxSessionTimeout=120000`,
    `globalOutstandingLimit=5000`,
    `forceSync=no`,
  ];
  if (members.length > 1) {
    writeFileSync(join(dataDir, 'data', 'myid'), `${plan.id}\n`);
    cfg.push('reconfigEnabled=false', 'standaloneEnabled=false', 'electionPortBindRetry=10');
    for (const m of members) cfg.push(`server.${m.id}=127.0.0.1:${m.peerPort}:${m.electionPort}`);
  }
  const cfgFile = join(dataDir, 'zoo.cfg');
  writeFileSync(cfgFile, cfg.join('\n') + '\n');
  const logFile = join(dataDir, 'zookeeper.log');
  const classpath = [ZK_JAR, ...(existsSync(LOGGER_JAR) ? [LOGGER_JAR] : [])].join(':');
  const javaArgs = [
    ...(options.fastStart ? ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'] : ['-Xmx1g']),
    '-Xshare:auto',
    `-Dorg.slf4j.simpleLogger.defaultLogLevel=${options.logLevel}`,
    '-Dorg.slf4j.simpleLogger.showDateTime=true',
    '-Dzookeeper.jmx.log4j.disable=true',
    `-Djute.maxbuffer=${options.juteMaxBuffer}`,
    '-cp',
    classpath,
    'org.apache.zookeeper.server.quorum.QuorumPeerMain',
    cfgFile,
  ];

  // One pid file per launch: a kept folder is used again by the next launch, and the watchdog of
  // a stopped one (which reads its pid file once its parent is gone) must not find the new
  // server's pid there and kill it.
  const pidFile = join(dataDir, `java-${randomBytes(4).toString('hex')}.pid`);
  let pid = 0;
  let running = false;
  let exited: Promise<void> = Promise.resolve();
  let stopped = false;
  let watchdog: ChildProcess | undefined;

  const spawnJava = async (): Promise<void> => {
    if (!watchdog) {
      watchdog = spawn('bash', ['-c', WATCHDOG], {
        stdio: ['pipe', 'ignore', 'ignore'],
        env: { ...process.env, ORRERY_ZK_PIDFILE: pidFile, ORRERY_ZK_DIR: keep ? '' : dir },
      });
      // Neither the watchdog nor its pipe may keep this process alive: the pipe is what ties them.
      watchdog.unref();
      (watchdog.stdin as unknown as { unref?: () => void }).unref?.();
    }
    const log = openSync(logFile, 'a');
    // A process group of its own: a terminal's Ctrl-C to the group of the process that started it
    // (npm start) must not kill the server before the processes using it have shut down; the
    // watchdog still ends it with that process.
    const child = spawn('java', javaArgs, { stdio: ['ignore', log, log], detached: true });
    closeSync(log);
    child.unref();
    if (child.pid === undefined) {
      throw new OrreryError('internal', `could not start java for ZooKeeper; see ${logFile}`);
    }
    pid = child.pid;
    writeFileSync(pidFile, `${pid}\n`);
    running = true;
    exited = new Promise<void>((resolve) => child.once('exit', () => {
      running = false;
      resolve();
    }));
  };

  const server: ZooKeeperServer = {
    connectString: `127.0.0.1:${plan.clientPort}`,
    clientPort: plan.clientPort,
    get pid() {
      return pid;
    },
    dataDir,
    logFile,
    get running() {
      return running;
    },
    fourLetter: (word) => fourLetterWord(plan.clientPort, word),
    async mode() {
      try {
        const srvr = await fourLetterWord(plan.clientPort, 'srvr', 1000);
        return /Mode: (\w+)/.exec(srvr)?.[1];
      } catch {
        return undefined;
      }
    },
    async zxid() {
      const srvr = await fourLetterWord(plan.clientPort, 'srvr');
      const hex = /Zxid: (0x[0-9a-f]+)/i.exec(srvr)?.[1];
      if (!hex) throw new OrreryError('internal', `no Zxid in srvr answer: ${srvr}`);
      return Number(BigInt(hex));
    },
    async kill(signal = 'SIGKILL') {
      if (!running) return;
      try {
        process.kill(pid, signal);
      } catch {
        // already gone
      }
      await exited;
    },
    async restart() {
      if (stopped) throw new OrreryError('closed', 'this ZooKeeper server was stopped');
      if (running) await server.kill('SIGKILL');
      await spawnJava();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
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
        }, 3000);
        await exited;
        clearTimeout(timer);
      }
      watchdog?.stdin?.destroy();
      if (!keep) rmSync(dataDir, { recursive: true, force: true });
      else rmSync(pidFile, { force: true });
    },
  };
  (server as { start?: () => Promise<void> }).start = spawnJava;
  return server;
}

type ResolvedOptions = Required<Omit<ZooKeeperOptions, 'dir' | 'clientPort'>>;

function resolveOptions(options: ZooKeeperOptions): ResolvedOptions {
  return {
    tickTimeMs: options.tickTimeMs ?? 250,
    startTimeoutMs: options.startTimeoutMs ?? 30_000,
    baseDir: options.baseDir ?? tmpdir(),
    logLevel: options.logLevel ?? 'warn',
    fastStart: options.fastStart ?? true,
    juteMaxBuffer: options.juteMaxBuffer ?? ZK_SERVER_MAX_BUFFER,
    clientBind: options.clientBind ?? '127.0.0.1',
  };
}

/** How many times a standalone server is started on fresh ports when its port was taken meanwhile. */
const PORT_RACE_ATTEMPTS = 4;

/**
 * Starts a standalone ZooKeeper on a free loopback port; resolves once it answers `imok` — and it
 * is this server that answers (its `conf` names its own data dir: a port taken by another process
 * between the probe and the bind is not mistaken for ours; the server is started again on another).
 */
export async function startZooKeeper(options: ZooKeeperOptions = {}): Promise<ZooKeeperServer> {
  assertInstalled();
  const opts = resolveOptions(options);
  const keep = options.dir !== undefined;
  for (let attempt = 1; ; attempt += 1) {
    const dir = options.dir ?? mkdtempSync(join(opts.baseDir, 'orrery-zk-'));
    if (keep) mkdirSync(dir, { recursive: true });
    const plan: MemberPlan = { id: 1, clientPort: options.clientPort ?? await freePort() };
    const server = launchMember(plan, [plan], dir, opts, keep);
    try {
      await (server as unknown as { start: () => Promise<void> }).start();
      const ours = async (): Promise<boolean> => {
        if (!server.running) throw new OrreryError('internal', `ZooKeeper exited while starting (port ${plan.clientPort} taken?); log: ${server.logFile}`, { details: { portRace: true } });
        return (await server.fourLetter('conf')).includes(server.dataDir);
      };
      await until(async () => (await server.fourLetter('ruok')) === 'imok' && (await ours()), opts.startTimeoutMs, 'ruok', server.logFile, () => server.running);
      await until(async () => (await server.mode()) === 'standalone', opts.startTimeoutMs, 'srvr', server.logFile, () => server.running);
    } catch (error) {
      const tail = readTail(server.logFile);
      await server.stop();
      if (!keep) rmSync(dir, { recursive: true, force: true });
      const raced = /BindException|Address already in use/.test(tail) || !server.running;
      // A port of its own choosing is tried again; a port asked for is the caller's to change.
      if (raced && options.clientPort === undefined && attempt < PORT_RACE_ATTEMPTS) continue;
      throw error;
    }
    return keep ? server : finishStandalone(server, dir);
  }
}

function finishStandalone(server: ZooKeeperServer, dir: string): ZooKeeperServer {
  const stop = server.stop;
  return Object.assign(server, {
    async stop() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

/** Starts an ensemble of `size` (default 3) servers on loopback; resolves once a quorum formed. */
export async function startEnsemble(size = 3, options: ZooKeeperOptions = {}): Promise<ZooKeeperEnsemble> {
  assertInstalled();
  const opts = resolveOptions(options);
  const dir = mkdtempSync(join(opts.baseDir, 'orrery-zk-ensemble-'));
  const plans: MemberPlan[] = [];
  for (let id = 1; id <= size; id += 1) {
    plans.push({ id, clientPort: await freePort(), peerPort: await freePort(), electionPort: await freePort() });
  }
  const servers = plans.map((plan) => launchMember(plan, plans, dir, opts));
  let stopped = false;
  const ensemble: ZooKeeperEnsemble = {
    connectString: servers.map((s) => s.connectString).join(','),
    servers,
    async leader() {
      for (const s of servers) {
        if (s.running && (await s.mode()) === 'leader') return s;
      }
      throw new OrreryError('not-found', 'no ZooKeeper member is leader now');
    },
    async waitForQuorum(timeoutMs = opts.startTimeoutMs) {
      await until(
        async () => {
          const modes = await Promise.all(servers.filter((s) => s.running).map((s) => s.mode()));
          return modes.includes('leader') && modes.every((m) => m === 'leader' || m === 'follower');
        },
        timeoutMs,
        'quorum',
        servers[0]!.logFile,
      );
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all(servers.map((s) => s.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all(servers.map((s) => (s as unknown as { start: () => Promise<void> }).start()));
    await ensemble.waitForQuorum();
  } catch (error) {
    await ensemble.stop();
    throw error;
  }
  return ensemble;
}
