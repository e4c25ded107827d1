// The `zookeeper` addon as Orrery builds it (patches/zookeeper+*.patch), against a real ZooKeeper:
// when the C client closes its socket (a link it gives up on, a request whose send fails), the
// addon's poll handle must not outlive the descriptor number and take another socket's place.
import { execFile, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { createTcpProxy } from '../testing/index.js';

const zkConnect = inject('zkConnect');
const fixture = fileURLToPath(new URL('../testing/zk-addon-fd-reuse.mjs', import.meta.url));
const sendFailureFixture = fileURLToPath(new URL('../testing/zk-addon-send-failure.mjs', import.meta.url));

interface ChildResult { code: number | null; signal: NodeJS.Signals | null; output: string }

function runFixture(sessionTimeoutMs: number): Promise<ChildResult> {
  return new Promise((resolve) => {
    // The child stages the whole sequence on its own event loop (see the fixture's header); its own
    // timeout stops it (SIGKILL, by pid) if it hangs.
    execFile(process.execPath, [fixture, zkConnect, String(sessionTimeoutMs)], { timeout: 60_000, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      const e = error as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, signal: e?.signal ?? null, output: `${stdout}${stderr}` });
    });
  });
}

describe('zookeeper addon (patched)', () => {
  it('closes its poll handle when the C client drops a timed-out link, so a socket that reuses the descriptor keeps working', async () => {
    // Unpatched, this child aborts in libuv (SIGABRT from uv__epoll_ctl_prep) or a socket goes deaf.
    const result = await runFixture(4000);
    expect(result.signal, result.output).toBeNull();
    expect(result.output).toMatch(/ZooKeeper link had descriptor (\d+); the new sockets have .*\b\1\b/);
    expect(result.output).toContain('every socket answered');
    expect(result.code, result.output).toBe(0);
  }, 90_000);

  it('moves its poll handle when a request\'s failed send makes the C client close the socket, so the next session can use that descriptor', async () => {
    // Unpatched, this child dies of SIGSEGV (uv_poll_start on a poll handle that could not be set up).
    const [host, port] = zkConnect.split(':');
    const proxy = await createTcpProxy({ targetHost: host, targetPort: Number(port) });
    try {
      const result = await new Promise<ChildResult>((resolve) => {
        const child = fork(sendFailureFixture, [proxy.connectString, zkConnect, '4000'], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
        let output = '';
        child.stdout!.on('data', (d: Buffer) => { output += d.toString(); });
        child.stderr!.on('data', (d: Buffer) => { output += d.toString(); });
        // The child has its link and has blocked its event loop: reset the link under it.
        child.once('message', () => proxy.reset());
        const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
        child.once('close', (code, signal) => {
          clearTimeout(timer);
          resolve({ code, signal, output });
        });
      });
      expect(result.signal, result.output).toBeNull();
      expect(result.output).toMatch(/A's link had descriptor \d+; the request returned 0 and closed it/);
      expect(result.output).toContain('both handles connected');
      expect(result.code, result.output).toBe(0);
    } finally {
      await proxy.close();
    }
  }, 90_000);
});
