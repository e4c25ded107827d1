// Shared by the `zookeeper` addon's child-process fixtures (zk-addon-*.mjs, run by addon.test.ts).
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/**
 * This process's TCP connections to `port`, from /proc: each one's descriptor, socket inode and
 * whether it is established.
 */
export function connectionsTo(port) {
  const states = new Map();
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length > 9 && parseInt(cols[2].split(':')[1], 16) === port) states.set(cols[9], cols[3]);
  }
  const out = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    let target;
    try { target = readlinkSync(`/proc/self/fd/${fd}`); } catch { continue; }
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m && states.has(m[1])) out.push({ fd: Number(fd), inode: m[1], established: states.get(m[1]) === '01' });
  }
  return out;
}

/** Resolves with the name of the first of `events` that `emitter` emits. */
export function once(emitter, ...events) {
  return new Promise((resolve) => {
    const handlers = events.map((event) => [event, () => {
      for (const [name, handler] of handlers) emitter.removeListener(name, handler);
      resolve(event);
    }]);
    for (const [event, handler] of handlers) emitter.on(event, handler);
  });
}
