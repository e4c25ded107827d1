// Child process of `addon.test.ts` (forked, with IPC): does a request whose send fails leave the
// `zookeeper` addon polling a closed descriptor?
//
// 1. Handle A connects through the parent's TCP proxy (argv[2]); the child tells the parent which
//    descriptor its link has, and blocks its event loop at once.
// 2. The parent resets the proxy: the link is reset while A's poll callback cannot run.
// 3. Still blocked, the child sends a request on A. Its send fails, and the C client closes the socket
//    then and there (nonblocking_send).
// 4. At once, handle B connects straight to ZooKeeper (argv[3]). Unpatched, its socket takes A's old
//    number (patched, A has already reconnected on it, and B gets another).
//
// The unpatched addon still polls A's closed descriptor, so B's poll handle cannot be set up for
// the same number, and B uses it anyway: the process dies (SIGSEGV in uv_poll_start). Exit 0: both
// handles connected and answered. 2: the scenario did not happen (the request did not close A's
// socket), so nothing was shown.
import { createRequire } from 'node:module';
import { connectionsTo, once } from './zk-addon-fixture-support.mjs';

const require = createRequire(import.meta.url);
const { ZooKeeper } = require('zookeeper');
const [viaProxy, direct, timeoutArg = '6000'] = process.argv.slice(2);
const timeout = Number(timeoutArg);
const proxyPort = Number(viaProxy.split(':')[1]);

function exists(zk, path) {
  return new Promise((resolve) => zk.a_exists(path, false, (rc) => resolve(rc)));
}

const a = new ZooKeeper();
const aConnected = once(a, 'connect');
a.init({ connect: viaProxy, timeout, debug_level: 0, host_order_deterministic: false });
await aConnected;
const [link] = connectionsTo(proxyPort);
if (!link) { console.log('no connection to the proxy found in /proc'); process.exit(2); }

const b = new ZooKeeper();
const bConnected = once(b, 'connect');
const aBack = once(a, 'connect'); // A reconnects through the proxy (forwarding again)
// Ask the parent to reset the link, and block at once: the reset arrives while A's poll callback
// cannot run (process.send writes to the pipe before it returns).
process.send({ fd: link.fd });
const deadline = Date.now() + 10_000;
while (connectionsTo(proxyPort).some((c) => c.inode === link.inode && c.established)) {
  if (Date.now() > deadline) { console.log('the link was never reset'); process.exit(2); }
}
const rc = a.a_exists('/', false, () => {}); // its send fails: the C client closes the socket
const closed = !connectionsTo(proxyPort).some((c) => c.inode === link.inode);
b.init({ connect: direct, timeout, debug_level: 0, host_order_deterministic: false });
const bSocket = connectionsTo(Number(direct.split(':')[1])).map((c) => c.fd);
console.log(`A's link had descriptor ${link.fd}; the request returned ${rc}${closed ? ' and closed it' : ''}; B's socket has ${bSocket.join(' ')}`);
if (!closed) { console.log('the request did not close the socket: scenario not reached'); process.exit(2); }
await bConnected;
await aBack;
const answers = [await exists(a, '/'), await exists(b, '/')];
console.log(`both handles connected; exists('/') answered ${answers.join(' ')}`);
process.exit(answers.every((rc) => rc === 0) ? 0 : 1);
