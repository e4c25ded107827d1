// A shell run started ahead of its fire time: its process waits at a gate and the command begins at
// `startAt` — real /bin/sh processes, real pipes.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '@orrery/core/testing';
import { GATE_CLOSED_EXIT, runShell, SHELL_GATE, type ShellRunSpec } from './shell-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'shell-gate-'));
let seq = 0;

function spec(command: string, extra: Partial<ShellRunSpec> = {}): ShellRunSpec {
  seq += 1;
  return {
    command, env: { ORRERY_JOB: 'gate' }, resultFile: join(dir, `${seq}.result.json`),
    stdoutPath: join(dir, `${seq}.out`), stderrPath: join(dir, `${seq}.err`), timeoutMs: 0, killGraceMs: 200, ...extra,
  };
}

const groupGone = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0);
    return false;
  } catch {
    return true;
  }
};

describe('a shell run started ahead of its time', () => {
  it('runs its command only once the gate opens, as the same process with the same argv[0], environment and descriptors as a run started directly', async () => {
    const marker = join(dir, 'ran-at');
    // What the job can see of how it was started: argv[0], its variables, descriptor 3 (the gate's
    // pipe, closed before the command; nothing there in a run started directly), its pid.
    const probe = `echo "$0 $ORRERY_JOB"; if [ -e /proc/$$/fd/3 ]; then echo "fd 3 open"; else echo "fd 3 closed"; fi; echo $$`;
    const direct = await runShell(spec(probe)).done;
    const startAt = Date.now() + 600;
    const starts: number[] = [];
    const handle = runShell(spec(`date +%s%3N > ${marker}; ${probe}`, { startAt, onStart: (at) => starts.push(at) }));
    // Held at the gate: the process exists, the command has not run.
    expect(handle.pid).toBeGreaterThan(0);
    expect(existsSync(marker)).toBe(false);
    expect(starts).toEqual([]);
    const gated = await handle.done;
    expect(gated.status).toBe('succeeded');
    // Let through no earlier than startAt, and reported started then.
    expect(starts).toHaveLength(1);
    expect(starts[0]).toBeGreaterThanOrEqual(startAt);
    expect(gated.startedAt).toBe(starts[0]);
    expect(Number(readFileSync(marker, 'utf8'))).toBeGreaterThanOrEqual(startAt);
    // Same argv[0], same variables, no gate pipe left open, the same process as was started.
    const [directHead, directFd3] = direct.stdoutTail.split('\n');
    const [gatedHead, gatedFd3, gatedPid] = gated.stdoutTail.split('\n');
    expect(gatedHead).toBe(directHead);
    expect(gatedHead).toBe('/bin/sh gate');
    expect(directFd3).toBe('fd 3 closed');
    expect(gatedFd3).toBe('fd 3 closed');
    expect(Number(gatedPid)).toBe(handle.pid);
  });

  it('withdrawn before the gate opens: the command never runs, the group is gone, the result says withdrawn', async () => {
    const marker = join(dir, 'withdrawn-ran');
    const starts: number[] = [];
    const handle = runShell(spec(`touch ${marker}`, { startAt: Date.now() + 60_000, onStart: (at) => starts.push(at) }));
    handle.withdraw!();
    const result = await handle.done;
    expect(result.withdrawn).toBe(true);
    expect(starts).toEqual([]);
    expect(existsSync(marker)).toBe(false);
    expect(groupGone(handle.pid)).toBe(true);
  });

  it('stopped before the gate opens: aborted, and the command never runs', async () => {
    const marker = join(dir, 'stopped-ran');
    const handle = runShell(spec(`touch ${marker}`, { startAt: Date.now() + 60_000 }));
    handle.stop('stop');
    const result = await handle.done;
    expect(result).toMatchObject({ status: 'aborted' });
    expect(result.withdrawn).toBeUndefined();
    expect(existsSync(marker)).toBe(false);
  });

  it('its timeout counts from the gate, not from the process start', async () => {
    // Held 1.5 s at the gate with a 1 s timeout: counted from the process start it would time out.
    const result = await runShell(spec('exit 0', { startAt: Date.now() + 1500, timeoutMs: 1000 })).done;
    expect(result.status).toBe('succeeded');
  });

  it('a withdraw after the gate opened changes nothing', async () => {
    const started: number[] = [];
    const handle = runShell(spec('sleep 0.3; echo done', { startAt: Date.now() + 200, onStart: (at) => started.push(at) }));
    await eventually(() => expect(started).toHaveLength(1), { timeoutMs: 5000 });
    handle.withdraw!();
    const result = await handle.done;
    expect(result).toMatchObject({ status: 'succeeded', stdoutTail: 'done\n' });
    expect(result.withdrawn).toBeUndefined();
  });

  it('the gate never lets the command through if its pipe closes unopened (the executor went)', async () => {
    const marker = join(dir, 'orphan-ran');
    const child = spawn('/bin/sh', ['-c', SHELL_GATE, '/bin/sh', `touch ${marker}`], { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
    (child.stdio[3] as NodeJS.WritableStream).end();
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(GATE_CLOSED_EXIT);
    expect(existsSync(marker)).toBe(false);
  });
});
