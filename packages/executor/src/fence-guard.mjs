// The executor's fence guard: a tiny process of its own (plain JavaScript, no TypeScript loader, so
// it starts in tens of milliseconds) that kills the executor's job process groups when the executor
// can no longer vouch for them:
//
// - at the **fence deadline** the executor last sent (the latest moment its ZooKeeper session is
//   certainly still alive, on the shared monotonic clock), unless a later one came meanwhile — so a
//   frozen executor (SIGSTOP, a stalled event loop) cannot leave a shard running past its session.
//   It only kills then: the executor may still be alive and holds its session itself;
// - at once when the executor is gone (its IPC channel closed without a goodbye: `kill -9`, an OOM
//   kill, a crash). Then, once every member of those groups is gone, it **closes the dead
//   executor's ZooKeeper session** itself — it attaches to the session with the id and password the
//   executor sent and closes it — so the executor's presence and claims vanish at once and its
//   shards fail over in about a second, not after a session timeout.
//
// Why closing the session can never let a shard run on two hosts at once:
// - A crashed run is re-run only after the job leader sees its claim's session without a presence,
//   and the presence is an ephemeral node of that same session: it goes only when the session ends.
//   Every other owner's claim waits for the shard's `running` claim to be released the same way.
// - The guard ends the session only after every process of every tracked job group is gone (read
//   from /proc: a zombie is gone, it runs nothing). So when anyone can claim the re-run, the old
//   run is already dead — the order is kill → dead → session closed → presence gone → re-run.
// - If the groups are not all gone within GROUP_EXIT_WAIT_MS (a process stuck in the kernel), the
//   guard does not close the session: it expires after its timeout, as it did before.
// - A clean `close()` of the executor says goodbye first: the guard then forgets the session and
//   exits without touching it (the executor closes it itself, once).
// What it does not cover (the session timeout and self-fencing apply, unchanged): the host lost or
// cut off (the guard dies or is cut off with it), the guard itself killed (e.g. with the executor's
// whole cgroup), ZooKeeper unreachable from the guard until the session would have expired anyway
// (it gives up then). A job group whose `track` message never arrived is found by the run mark
// every job process carries in its environment (`ORRERY_RUN_MARK`) and killed too. Not covered: a
// job process that left its group (`setsid`) and replaced its environment (`exec env -i`) — the
// guard cannot see it, as it could not before.
//
// It runs in its own process group, so a signal to the executor's group does not reach it.
// Protocol (IPC, JSON; anything else is ignored): executor → guard
//   `{type:'deadline', at}` (ms on the monotonic clock, or `null` to disarm),
//   `{type:'track', pgid}`, `{type:'untrack', pgid}`, `{type:'mark', value}` (the run mark, hex),
//   `{type:'session', connect, timeoutMs, sessionId, password}` on every new session (or
//     `{type:'session', sessionId: null}` when it is lost) — the password travels only here, never
//     in argv, env or a log line (no digest credentials or chroot are needed: a session is closed
//     by its id and password alone, whatever the ACLs),
//   `{type:'goodbye'}` (a clean close: exit, do nothing more);
// guard → executor `{type:'ready'}`, then `{type:'fenced', pgids}` after it killed groups at a deadline.
// Logs: one JSON line per action on stderr (pino's shape), variables in fields.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** How long the guard waits for the killed groups' members to be gone before it gives up on closing the session. */
const GROUP_EXIT_WAIT_MS = 5000;
/** How often it looks at /proc while it waits. */
const GROUP_EXIT_POLL_MS = 5;
/** The longest session it believes (ZooKeeper's own default ceiling is 20 ticks, 40 s at 2 s ticks). */
const MAX_SESSION_TIMEOUT_MS = 10 * 60_000;
/** pino's level numbers. */
const LEVEL = { info: 30, warn: 40, error: 50 };

const tracked = new Set();
/** Groups killed at a fence deadline, until seen gone: a death right after must wait for them too. */
const fencedGroups = new Set();
let deadline = null;
let timer;
/** The executor's current session: `{connect, timeoutMs, sessionId, password}`, or null. */
let session = null;
let leaving = false;

const now = () => Number(process.hrtime.bigint() / 1_000_000n);

function log(level, fields, msg) {
  try {
    process.stderr.write(`${JSON.stringify({ level: LEVEL[level], time: Date.now(), pid: process.pid, name: 'fence-guard', ...fields, msg })}\n`);
  } catch {
    // stderr gone: nothing to tell anyone
  }
}

/** A process group id the guard may signal: a whole positive pid above init (never 0 or 1: `kill(-1)` is everyone). */
const isPgid = (v) => Number.isSafeInteger(v) && v > 1 && v < 2 ** 22 + 1;

function killAll() {
  const pgids = [...tracked];
  for (const pgid of pgids) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  tracked.clear();
  return pgids;
}

/**
 * The executor's run mark: a random value every job process it starts carries in its environment
 * (`ORRERY_RUN_MARK`, set once in the jobs' base environment). A job group whose `track` message
 * never arrived — spawned in the instant before the executor died, or lost on the way — is still
 * found by it: before closing the session the guard kills the group of every process whose
 * environment (as it was at exec, `/proc/PID/environ`) holds the mark.
 */
let runMark = null;
const RUN_MARK_PATTERN = /^[0-9a-f]{16,64}$/;

/** The process groups of every live process whose initial environment holds the run mark. */
function markedGroups() {
  if (runMark === null) return [];
  const needle = Buffer.from(`ORRERY_RUN_MARK=${runMark}\0`);
  const groups = new Set();
  let names;
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of names) {
    if (name.charCodeAt(0) > 57 || name.charCodeAt(0) < 48 || Number(name) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`);
      if (environ.indexOf(needle) < 0 && !environ.subarray(0, needle.length).equals(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pgid = Number(fields[2]);
      if (fields[0] !== 'Z' && fields[0] !== 'X' && isPgid(pgid) && pgid !== process.pid) groups.add(pgid);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return [...groups];
}

/** Kills the groups of marked processes the executor never told about; returns them. */
function killMarked(known) {
  const extra = markedGroups().filter((pgid) => !known.includes(pgid));
  for (const pgid of extra) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return extra;
}

/**
 * The live members of the groups `pgids`, from /proc (as orphans.ts reads it): a process whose
 * process group is one of them and which is not a zombie or being torn down.
 */
function liveMembers(pgids) {
  const wanted = new Set(pgids);
  let live = 0;
  let names;
  try {
    names = readdirSync('/proc');
  } catch {
    return -1; // no /proc: cannot prove anything
  }
  for (const name of names) {
    if (name.charCodeAt(0) > 57 || name.charCodeAt(0) < 48) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: count from the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (wanted.has(Number(fields[2])) && fields[0] !== 'Z' && fields[0] !== 'X') live += 1;
    } catch {
      // gone meanwhile
    }
  }
  return live;
}

/** Resolves true once no member of `pgids` is alive, false after GROUP_EXIT_WAIT_MS (or without /proc). */
async function waitGroupsGone(pgids) {
  const until = now() + GROUP_EXIT_WAIT_MS;
  for (;;) {
    const live = liveMembers(pgids);
    if (live === 0) return true;
    if (live < 0 || now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, GROUP_EXIT_POLL_MS));
  }
}

/** The `zookeeper` native module, loaded only when a session must be closed (it costs ~15 ms). */
function loadZooKeeper() {
  try {
    return createRequire(import.meta.url)('zookeeper');
  } catch {
    // Not resolvable from here: it is a dependency of @orrery/core.
    return createRequire(import.meta.resolve('@orrery/core'))('zookeeper');
  }
}

/**
 * Attaches to the session `s` and closes it, retrying (the native client goes round the ensemble by
 * itself) until `giveUpAt` (monotonic ms): past it the session has expired anyway.
 * Resolves 'closed' | 'expired' | 'gave-up'.
 */
function closeSession(s, giveUpAt) {
  return new Promise((resolve) => {
    const { ZooKeeper } = loadZooKeeper();
    const h = new ZooKeeper();
    let outcome;
    const finish = (o) => {
      if (outcome) return;
      outcome = o;
      clearTimeout(giveUp);
      try {
        h.close();
      } catch {
        // already closed
      }
      resolve(o);
    };
    // Attached: closing the handle sends closeSession, which ends the session on the server.
    h.on('connect', () => setImmediate(() => finish('closed')));
    // Ended without our asking: the server no longer knows the session (it expired).
    h.on('close', () => finish('expired'));
    const giveUp = setTimeout(() => finish('gave-up'), Math.max(0, giveUpAt - now()));
    h.init({
      connect: s.connect,
      timeout: s.timeoutMs,
      debug_level: 0,
      host_order_deterministic: false,
      client_id: s.sessionId,
      client_password: s.password,
    });
  });
}

/** The executor is gone: kill its groups, wait until they are dead, then end its session. */
async function executorGone() {
  const goneAt = now();
  const s = session;
  session = null;
  const tracked = killAll();
  // Every job process carries the run mark: a group the executor had no time to report dies too.
  const untracked = killMarked(tracked);
  const pgids = [...tracked, ...untracked];
  log('warn', { groups: pgids.length, ...(untracked.length > 0 ? { untracked: untracked.length } : {}) }, 'the executor died: killed its job process groups');
  if (!s) {
    log('info', {}, 'no live ZooKeeper session to close');
    return;
  }
  if (!(await waitGroupsGone([...pgids, ...fencedGroups]))) {
    log('error', { groups: pgids.length, waitedMs: now() - goneAt }, 'job processes outlived SIGKILL: leaving the session to expire on its own');
    return;
  }
  log('info', { groups: pgids.length, waitedMs: now() - goneAt }, 'every job process is gone');
  let outcome;
  try {
    // The server expires the session at most a timeout after the executor's last packet, which
    // came before now: past that there is nothing left to close.
    outcome = await closeSession(s, goneAt + s.timeoutMs);
  } catch (error) {
    // The native client's message should not hold the password; make sure of it anyway.
    const message = (error instanceof Error ? error.message : String(error)).split(s.password).join('[redacted]');
    log('error', { sessionId: s.sessionId, err: { message } }, 'could not close the dead executor\'s ZooKeeper session: leaving it to expire');
    return;
  }
  if (outcome === 'closed') log('info', { sessionId: s.sessionId, ms: now() - goneAt }, 'closed the dead executor\'s ZooKeeper session');
  else if (outcome === 'expired') log('info', { sessionId: s.sessionId }, 'the dead executor\'s ZooKeeper session had already expired');
  else log('warn', { sessionId: s.sessionId, timeoutMs: s.timeoutMs }, 'ZooKeeper unreachable until the session would have expired: gave up closing it');
}

function arm() {
  if (timer) clearTimeout(timer);
  timer = undefined;
  if (deadline === null) return;
  const wait = deadline - now();
  if (wait > 0) {
    timer = setTimeout(arm, Math.min(wait, 2 ** 30));
    return;
  }
  // Past the deadline with no newer word from the executor: fence (kill only — it may be alive).
  // A group the executor had not yet told about (it tells after a burst's spawns) carries the mark.
  deadline = null;
  const tracked = killAll();
  const pgids = [...tracked, ...killMarked(tracked)];
  for (const pgid of pgids) fencedGroups.add(pgid);
  if (pgids.length > 0) {
    log('warn', { groups: pgids.length }, 'fence deadline passed: killed the executor\'s job process groups');
    if (process.connected) process.send({ type: 'fenced', pgids });
  }
}

/** A session message's fields, or null when malformed (hostile or stale input is ignored). */
function parseSession(m) {
  if (m.sessionId === null) return null;
  const ok = typeof m.connect === 'string' && m.connect.length > 0 && m.connect.length < 4096
    && typeof m.sessionId === 'string' && /^[0-9a-f]{1,16}$/i.test(m.sessionId)
    && typeof m.password === 'string' && /^[0-9a-f]{1,64}$/i.test(m.password)
    && Number.isSafeInteger(m.timeoutMs) && m.timeoutMs > 0 && m.timeoutMs <= MAX_SESSION_TIMEOUT_MS;
  return ok ? { connect: m.connect, timeoutMs: m.timeoutMs, sessionId: m.sessionId, password: m.password } : undefined;
}

// The executor's stderr may be a pipe nobody reads any more: a failed write must not end the guard.
process.stderr.on('error', () => undefined);

process.on('message', (m) => {
  if (leaving || typeof m !== 'object' || m === null) return;
  if (m.type === 'deadline') {
    // Forget fenced groups seen gone (a pgid could be reused later by an unrelated group).
    for (const pgid of fencedGroups) if (liveMembers([pgid]) === 0) fencedGroups.delete(pgid);
    deadline = typeof m.at === 'number' && Number.isFinite(m.at) ? m.at : null;
    arm();
  } else if (m.type === 'track') {
    if (isPgid(m.pgid)) tracked.add(m.pgid);
  } else if (m.type === 'untrack') {
    tracked.delete(m.pgid);
  } else if (m.type === 'mark') {
    if (typeof m.value === 'string' && RUN_MARK_PATTERN.test(m.value)) runMark = m.value;
  } else if (m.type === 'session') {
    const s = parseSession(m);
    if (s !== undefined) session = s;
  } else if (m.type === 'goodbye') {
    // A clean close: the executor stops its runs and closes its session itself.
    leaving = true;
    session = null;
    tracked.clear();
    deadline = null;
    arm();
    process.exit(0);
  }
});

process.on('disconnect', () => {
  if (leaving) return;
  leaving = true;
  if (timer) clearTimeout(timer);
  executorGone().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
process.send({ type: 'ready' });
