// The edges of the processes' lives: orrery-executor connecting to a ZooKeeper that does not answer,
// and one Ctrl-C of `npm start` (start.ts) shutting everything down gracefully, once.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { isProcessAlive, stdioWithoutSockets } from '@orrery/core';
import { eventually, freePort, uniqueRoot } from '@orrery/core/testing';
import { startProcess, stopAllProcesses } from '../src/index.js';

const zkConnect = inject('zkConnect');
/** Far beyond what each step takes on a loaded machine, far below the executor's 60 s connect timeout. */
const DEADLINE_MS = 30_000;
const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const START_SCRIPT = fileURLToPath(new URL('../scripts/start.ts', import.meta.url));

let started: ChildProcess | undefined;
afterEach(async () => {
  // A start.ts still running: its whole group, then its children (in groups of their own) by pid.
  if (started?.pid && started.exitCode === null && started.signalCode === null) {
    try {
      process.kill(-started.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  started = undefined;
  await stopAllProcesses();
});

const exitOf = (child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve({ code: child.exitCode, signal: child.signalCode })
    : new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

/** `promise`, or an error once {@link DEADLINE_MS} passed (a deadline, not a timing assertion). */
async function withDeadline<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

describe('orrery-executor connecting to a ZooKeeper that does not answer', () => {
  it('says where it connects, warns while it cannot, and exits at once on SIGTERM', async () => {
    const port = await freePort(); // nothing listens there
    const root = uniqueRoot('nowhere');
    const dataDir = mkdtempSync(join(tmpdir(), 'orrery-edges-'));
    const executor = startProcess(
      'orrery-executor',
      ['--zk', `127.0.0.1:${port}`, '--root', root, '--namespace', 'edges', '--name', 'edge-1', '--data-dir', dataDir, '--log-level', 'info'],
      { ORRERY_ZK_AUTH: 'orrery:zk-password-never-logged', ORRERY_CLUSTER_TOKEN: 'cluster-token-never-logged' },
    );
    const connecting = JSON.parse(await executor.waitForLine(/"connecting to ZooKeeper"/)) as Record<string, unknown>;
    expect(connecting).toMatchObject({ level: 30, zk: `127.0.0.1:${port}`, root });
    const retry = JSON.parse(await executor.waitForLine(/"still connecting to ZooKeeper"/)) as Record<string, unknown>;
    expect(retry).toMatchObject({ level: 40, zk: `127.0.0.1:${port}`, root, warnings: 1 });
    expect(retry.elapsedSeconds).toEqual(expect.any(Number));
    executor.kill('SIGTERM');
    expect(await withDeadline(executor.exited, 'exit after SIGTERM')).toBe(0);
    expect(executor.lines.some((l) => l.includes('"could not start"'))).toBe(false);
    expect(executor.lines.join('\n')).not.toMatch(/never-logged/);
  });
});

describe('npm start (start.ts)', () => {
  it('shuts every process down gracefully, once, on one Ctrl-C to its process group', { timeout: 180_000 }, async () => {
    // As a terminal runs it: a process group of its own (the foreground job), Ctrl-C to all of it.
    const child = spawn(process.execPath, ['--import', 'tsx', START_SCRIPT], {
      cwd: REPO,
      detached: true,
      stdio: stdioWithoutSockets(['ignore', 'pipe', 'pipe']),
      env: { ...process.env, ORRERY_ZK: zkConnect, ORRERY_ROOT: uniqueRoot('npm-start'), ORRERY_LOG_LEVEL: 'info', ORRERY_HOME: mkdtempSync(join(tmpdir(), 'npm-start-')), ORRERY_CONSOLE_PORT: '0' },
    });
    started = child;
    let out = '';
    child.stdout!.on('data', (c: Buffer) => { out += c.toString('utf8'); });
    child.stderr!.on('data', (c: Buffer) => { out += c.toString('utf8'); });
    const exited = exitOf(child);
    await eventually(() => expect(out).toContain('Orrery is running locally'), { timeoutMs: 150_000, intervalMs: 200 });
    const pidOf = (label: RegExp): number => Number(label.exec(out)?.[1]);
    const children = [pidOf(/Allocator +orrery-sharding \(pid (\d+)\)/), pidOf(/Executor +local-demo for namespace 'demo' \(pid (\d+)\)/), pidOf(/Console +orrery-console \(pid (\d+)\)/)];
    expect(children.every((pid) => pid > 0)).toBe(true);

    process.kill(-child.pid!, 'SIGINT');
    expect(await withDeadline(exited, 'start.ts exit after Ctrl-C')).toEqual({ code: 0, signal: null });
    const executorLines = out.split('\n').filter((l) => l.startsWith('[orrery-executor] '));
    expect(executorLines.filter((l) => l.includes('"shutting down gracefully"'))).toHaveLength(1);
    expect(executorLines.filter((l) => l.includes('second signal'))).toEqual([]);
    // The executor's handover ran to its end (the graceful path, not a close on the way out).
    expect(executorLines.some((l) => l.includes('"runs in progress finished"') || l.includes('"shutdown timeout'))).toBe(true);
    for (const pid of children) await eventually(() => expect(isProcessAlive(pid)).toBe(false), { timeoutMs: DEADLINE_MS });
  });
});
