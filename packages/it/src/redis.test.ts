import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pingRedis, redisServerVersion, startRedis, REDIS_SERVER_BIN } from './redis.js';

// npm test installs Debian's redis-server (test.sh); a bare `npx vitest run` without it skips this.
describe.skipIf(!existsSync(REDIS_SERVER_BIN))('startRedis', () => {
  it('starts a server on a free loopback port that answers PING, and stop() ends it and removes its dir', async () => {
    const server = await startRedis();
    try {
      expect(server.port).toBeGreaterThan(0);
      expect(await pingRedis(server.port)).toBe(true);
      expect(redisServerVersion()).toMatch(/^Redis server v=\d+\.\d+/);
    } finally {
      await server.stop();
    }
    expect(server.running).toBe(false);
    expect(existsSync(server.dir)).toBe(false);
    expect(await pingRedis(server.port, '127.0.0.1', 300)).toBe(false);
  });
});
