/** @orrery/sharding: the allocator (pure core and its ZooKeeper shell). */
export * from './allocate.js';
export * from './eligibility.js';
export * from './allocator.js';
export * from './config.js';
export * from './cluster.js';
