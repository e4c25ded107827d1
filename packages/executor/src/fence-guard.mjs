// The executor's fence guard: a tiny process of its own (plain JavaScript, no TypeScript loader, so
// it starts in tens of milliseconds) that kills the executor's job process groups when the executor
// can no longer vouch for them:
//
// - at the **fence deadline** the executor last sent (the latest moment its ZooKeeper session is
//   certainly still alive, on the shared monotonic clock), unless a later one came meanwhile — so a
//   frozen executor (SIGSTOP, a stalled event loop) cannot leave a shard running past its session;
// - at once when the executor is gone (its IPC channel closed: `kill -9`, a crash).
//
// It runs in its own process group, so a signal to the executor's group does not reach it.
// Protocol (IPC, JSON): executor → guard `{type:'deadline', at}` (ms on the monotonic clock, or
// `null` to disarm), `{type:'track', pgid}`, `{type:'untrack', pgid}`; guard → executor
// `{type:'fenced', pgids}` after it killed groups at a deadline.

const tracked = new Set();
let deadline = null;
let timer;

const now = () => Number(process.hrtime.bigint() / 1_000_000n);

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

function arm() {
  if (timer) clearTimeout(timer);
  timer = undefined;
  if (deadline === null) return;
  const wait = deadline - now();
  if (wait > 0) {
    timer = setTimeout(arm, Math.min(wait, 2 ** 30));
    return;
  }
  // Past the deadline with no newer word from the executor: fence.
  deadline = null;
  const pgids = killAll();
  if (pgids.length > 0 && process.connected) process.send({ type: 'fenced', pgids });
}

process.on('message', (m) => {
  if (m.type === 'deadline') {
    deadline = typeof m.at === 'number' ? m.at : null;
    arm();
  } else if (m.type === 'track') {
    tracked.add(m.pgid);
  } else if (m.type === 'untrack') {
    tracked.delete(m.pgid);
  }
});

process.on('disconnect', () => {
  killAll();
  process.exit(0);
});
process.send({ type: 'ready' });
