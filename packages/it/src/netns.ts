/**
 * Network namespaces for the across-hosts test: each one a "host" of its own, joined to this
 * (the root) namespace by a veth pair — `10.231.N.1` on this side, `10.231.N.2` inside — so a
 * process in it reaches ZooKeeper and the console only over that link, and its link can be cut
 * (`cut()`: this side's end down; packets are dropped, as a failed switch port drops them).
 *
 * Made and removed by the test itself with iproute2 (`ip netns`, `ip link`); needs root (or
 * CAP_NET_ADMIN and CAP_SYS_ADMIN). Names carry this process's pid, so two runs never collide, and
 * `remove()` takes down both the namespace and the pair.
 */
import { execFileSync } from 'node:child_process';

/** One namespace and its link. */
export interface NetNamespace {
  /** The namespace's name (`ip netns exec NAME …`). */
  readonly name: string;
  /** Its own address (inside). */
  readonly address: string;
  /** This side's address of its link: what it dials to reach a server of this namespace. */
  readonly gateway: string;
  /** The prefix that runs a command inside it. */
  readonly exec: readonly string[];
  /** Takes the link down (this side): nothing gets through either way. */
  cut(): void;
  /** Brings the link back. */
  restore(): void;
  remove(): void;
}

const ip = (...args: string[]): string => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/**
 * Why network namespaces cannot be made here, or undefined when they can (one is made and removed
 * to find out).
 */
export function netnsUnavailable(): string | undefined {
  const probe = `orrery-probe-${process.pid}`;
  try {
    ip('netns', 'add', probe);
    ip('netns', 'del', probe);
    return undefined;
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    return (e.stderr ?? e.message).trim().split('\n')[0] ?? 'ip netns add failed';
  }
}

/** Makes namespace number `index` (1–250) with its veth link, up and addressed. */
export function createNetNamespace(index: number): NetNamespace {
  if (!Number.isInteger(index) || index < 1 || index > 250) throw new RangeError(`index must be 1..250 (got ${index})`);
  const tag = `${process.pid % 100_000}x${index}`;
  const name = `orrery-${tag}`;
  // Interface names are at most 15 bytes.
  const outside = `vo${tag}`;
  const inside = `vi${tag}`;
  const gateway = `10.231.${index}.1`;
  const address = `10.231.${index}.2`;
  const made: Array<() => void> = [];
  try {
    ip('netns', 'add', name);
    made.push(() => ip('netns', 'del', name));
    ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
    made.push(() => ip('link', 'del', outside));
    ip('link', 'set', inside, 'netns', name);
    ip('addr', 'add', `${gateway}/24`, 'dev', outside);
    ip('link', 'set', outside, 'up');
    ip('netns', 'exec', name, 'ip', 'addr', 'add', `${address}/24`, 'dev', inside);
    ip('netns', 'exec', name, 'ip', 'link', 'set', inside, 'up');
    ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up');
  } catch (error) {
    for (const undo of made.reverse()) {
      try {
        undo();
      } catch {
        // already gone
      }
    }
    throw error;
  }
  let removed = false;
  return {
    name,
    address,
    gateway,
    exec: ['ip', 'netns', 'exec', name],
    cut: () => void ip('link', 'set', outside, 'down'),
    restore: () => void ip('link', 'set', outside, 'up'),
    remove() {
      if (removed) return;
      removed = true;
      for (const undo of [() => ip('link', 'del', outside), () => ip('netns', 'del', name)]) {
        try {
          undo();
        } catch {
          // gone with the other (deleting a namespace deletes its end of the pair, and the pair with it)
        }
      }
    },
  };
}
