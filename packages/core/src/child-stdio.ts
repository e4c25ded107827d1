/**
 * Keeps this process's sockets out of the processes it starts.
 *
 * The ZooKeeper C client opens its socket without close-on-exec, so a child would inherit a copy
 * of the parent's ZooKeeper connection. Besides letting the child write to it, that copy keeps the
 * socket registered in the parent's epoll set after the client closes it (a server died, a session
 * ended): the next connection that gets the same descriptor number sees stale events, and the
 * `zookeeper` package closes it — again and again, while the child lives. Node cannot set
 * close-on-exec on a descriptor it did not open, but `spawn` can put something else at any
 * descriptor number in the child: {@link stdioWithoutSockets} extends a `stdio` array so that every
 * socket descriptor of this process above it becomes `/dev/null` in the child. Sockets that are
 * close-on-exec already (Node's own: its servers, connections, IPC channels and the pipes of the
 * children it started) are left out — they never reach a child — which keeps the array short
 * while a burst of runs holds hundreds of pipes open.
 */
import { openSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import type { StdioOptions } from 'node:child_process';

let devNull: number | undefined;

/**
 * The scan costs a readlink per open descriptor: with a few hundred open (a burst of runs, each
 * with its pipes), 100 spawns at once took three times as long as without it. So one scan serves
 * every spawn of the same event-loop turn (a burst of fires starts in one turn), and is forgotten
 * at the next turn and whenever the ZooKeeper client changes state or opens a new handle
 * ({@link forgetSocketScan}) — the moments a new ZooKeeper socket appears.
 */
let scan: number[] | undefined;

/** Drops the cached scan: the next spawn scans again. */
export function forgetSocketScan(): void {
  scan = undefined;
}

function socketFdsThisTurn(): number[] {
  if (scan === undefined) {
    scan = socketFds();
    setImmediate(forgetSocketScan).unref();
  }
  return scan;
}

/** O_CLOEXEC in the `flags` (octal) of /proc/self/fdinfo. */
const O_CLOEXEC = 0o2000000;

/** True when descriptor `name` is close-on-exec (false when that cannot be read: it is covered). */
function isCloseOnExec(name: string): boolean {
  try {
    const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${name}`, 'utf8'))?.[1];
    return flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) !== 0;
  } catch {
    return false;
  }
}

/** Socket descriptors of this process that a child would inherit, now. */
function socketFds(): number[] {
  const fds: number[] = [];
  try {
    for (const name of readdirSync('/proc/self/fd')) {
      const fd = Number(name);
      if (fd <= 2) continue;
      try {
        if (readlinkSync(`/proc/self/fd/${name}`).startsWith('socket:') && !isCloseOnExec(name)) fds.push(fd);
      } catch {
        // closed meanwhile (the directory's own descriptor, say)
      }
    }
  } catch {
    // no /proc: nothing to do
  }
  return fds;
}

/** `stdio` for `spawn`, with every socket of this process above it replaced by /dev/null in the child. */
export function stdioWithoutSockets(stdio: readonly StdioOptions[number][]): StdioOptions {
  const out: Array<StdioOptions[number]> = [...stdio];
  const sockets = socketFdsThisTurn().filter((fd) => fd >= stdio.length);
  if (sockets.length === 0) return out as StdioOptions;
  devNull ??= openSync('/dev/null', 'r+');
  for (const fd of sockets) {
    while (out.length < fd) out.push('ignore');
    out[fd] = devNull;
  }
  return out as StdioOptions;
}
