// Child process of `addon.test.ts`: does a ZooKeeper link lost to the C client's receive timeout
// leave the `zookeeper` addon holding a descriptor number that another socket now owns?
//
// 1. A handle connects to the ZooKeeper given as argv[2] (session timeout argv[3] ms).
// 2. The event loop is blocked for 3/4 of the session timeout. On waking, the C client finds no
//    answer for longer than 2/3 of it, closes its socket (descriptor N) and reports an error.
// 3. Right after, this process opens sockets to an echo server: the first takes number N.
// 4. When the handle has reconnected (or learnt its session expired), every socket writes more
//    than the kernel takes at once (libuv then changes its epoll events) and asks the echo server
//    one question. Every socket must get its answer.
//
// The unpatched addon closes its poll handle for N only at the reconnect, which removes the
// socket now holding N from epoll: the process aborts in libuv (`uv__epoll_ctl_prep`) or that
// socket never hears again. Exit 0: all answered. 1: some socket deaf. 2: the scenario did not
// happen (N was not reused), so nothing was shown.
import { createRequire } from 'node:module';
import { createServer, connect } from 'node:net';
import { connectionsTo, once } from './zk-addon-fixture-support.mjs';

const require = createRequire(import.meta.url);
const { ZooKeeper } = require('zookeeper');
const [connectString, timeoutArg = '6000'] = process.argv.slice(2);
const sessionTimeoutMs = Number(timeoutArg);
const zkPort = Number(connectString.split(':')[1]);
const SOCKETS = 20;

/** The descriptor of this process's established TCP connection to `port`, if any. */
function descriptorTo(port) {
  return connectionsTo(port).find((c) => c.established)?.fd;
}

const echo = createServer((s) => {
  s.on('error', () => {});
  s.on('data', (chunk) => { if (chunk.includes(0x3f)) s.write('!'); }); // '?' is a question
});
await new Promise((resolve) => echo.listen(0, '127.0.0.1', resolve));
const echoPort = echo.address().port;

const zk = new ZooKeeper();
const connected = once(zk, 'connect');
zk.init({ connect: connectString, timeout: sessionTimeoutMs, debug_level: 0, host_order_deterministic: false });
await connected;
const zkFd = descriptorTo(zkPort);
if (zkFd === undefined) { console.log('no connection to ZooKeeper found in /proc'); process.exit(2); }

const sockets = [];
const lost = once(zk, 'connecting', 'close');
await new Promise((resolve) => setImmediate(() => {
  const until = Date.now() + (sessionTimeoutMs * 3) / 4;
  while (Date.now() < until) { /* the event loop is blocked */ }
  // The next turn's timers run the C client, which gives up on its link and closes N; this
  // turn's check phase comes after them.
  setImmediate(() => {
    for (let i = 0; i < SOCKETS; i += 1) {
      const s = connect(echoPort, '127.0.0.1');
      s.on('error', () => {});
      sockets.push(s);
    }
    resolve();
  });
}));
await Promise.all(sockets.map((s) => (s.connecting ? once(s, 'connect') : undefined)));
const fds = sockets.map((s) => s._handle?.fd);
console.log(`ZooKeeper link had descriptor ${zkFd}; the new sockets have ${fds.join(' ')}`);
await lost;
const back = await once(zk, 'connect', 'close');
console.log(`ZooKeeper handle: ${back === 'connect' ? 'reconnected' : 'session expired'}`);
if (!fds.includes(zkFd)) { console.log(`no new socket took descriptor ${zkFd}: scenario not reached`); process.exit(2); }

const big = Buffer.alloc(8 << 20); // more than loopback's send buffer: libuv waits for POLLOUT
const answered = await Promise.all(sockets.map((s) => new Promise((resolve) => {
  const deadline = setTimeout(() => resolve(false), 15_000);
  s.once('data', () => { clearTimeout(deadline); resolve(true); });
  s.write(big);
  s.write('?');
})));
const deaf = fds.filter((_, i) => !answered[i]);
console.log(deaf.length === 0 ? 'every socket answered' : `deaf sockets (descriptors): ${deaf.join(' ')}`);
process.exit(deaf.length === 0 ? 0 : 1);
