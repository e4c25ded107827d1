// Test fixture: starts a ZooKeeper, prints its pid, then waits to be killed (zk-server.test.ts).
import { startZooKeeper } from './zk-server.js';

const server = await startZooKeeper();
process.stdout.write(`zookeeper-pid ${server.pid} dir ${server.dataDir}\n`);
setInterval(() => undefined, 1 << 30);
