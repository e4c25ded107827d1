/**
 * Closes the TCP sockets a child process inherited from the executor. The ZooKeeper C client opens
 * its socket without close-on-exec, so every process the executor starts would hold a copy of the
 * executor's ZooKeeper connection: a job could write to it, and — worse — when the executor closes
 * that socket (a lost session), the copy keeps it registered in the executor's epoll set, and the
 * next connection that gets the same descriptor number sees stale events and dies. Node children
 * (job workers, the fence guard) call this first thing; shell jobs close inherited descriptors in a
 * small prelude (shell-runner.ts).
 */
import { closeSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Closes every inherited descriptor above stderr that is a TCP socket; resolves how many. */
export function closeInheritedTcpSockets(): number {
  const tcpInodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    try {
      for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
        const inode = line.trim().split(/\s+/)[9];
        if (inode && inode !== '0') tcpInodes.add(inode);
      }
    } catch {
      // no such table (IPv6 off)
    }
  }
  let closed = 0;
  for (const name of readdirSync('/proc/self/fd')) {
    const fd = Number(name);
    if (fd <= 2) continue;
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${name}`))?.[1];
      if (inode && tcpInodes.has(inode)) {
        closeSync(fd);
        closed += 1;
      }
    } catch {
      // gone meanwhile (the directory's own descriptor, say)
    }
  }
  return closed;
}
