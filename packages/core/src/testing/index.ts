/**
 * Test and development tooling: a real ZooKeeper launcher and polling helpers.
 * Not for production code paths.
 */
export * from './zk-server.js';
export * from './eventually.js';
export * from './tcp-proxy.js';
export * from './force-expire.js';
export * from './unique-root.js';
export * from './job-of-size.js';
export * from './noting-creates.js';
