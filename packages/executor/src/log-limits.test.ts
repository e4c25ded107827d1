// The per-run log cap and back-pressure, in both runners, with real processes and real files; and
// the --max-log-size flag.
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { toError } from '@orrery/core';
import { EXECUTOR_USAGE, parseExecutorConfig } from './config.js';
import { DEFAULT_MAX_LOG_BYTES, logTruncationMarker } from './lazy-file.js';
import { createNodePool } from './node-pool.js';
import { runShell } from './shell-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'orrery-log-limits-'));
const MIB = 1024 * 1024;
let n = 0;
const io = (maxLogBytes?: number) => {
  n += 1;
  return { stdoutPath: join(dir, `${n}.out`), stderrPath: join(dir, `${n}.err`), timeoutMs: 60_000, killGraceMs: 500, ...(maxLogBytes ? { maxLogBytes } : {}) };
};
// Not in fixtures/jobs: other tests list that folder's handlers.
const fixture = (name: string): string => fileURLToPath(new URL(`../test/fixtures/flood/${name}`, import.meta.url));

describe('shell runs', () => {
  it('cap a flood of output: the log ends with the marker, the result counts the discarded bytes, the run succeeds', async () => {
    const spec = io(2 * MIB);
    const total = 50_000_000;
    const result = await runShell({ ...spec, command: `head -c ${total} /dev/zero | tr '\\0' x; echo done >&2`, env: {}, resultFile: join(dir, 'flood.json') }).done;
    expect(result.status).toBe('succeeded');
    expect(result.truncated).toEqual({ stdout: total - 2 * MIB });
    const log = readFileSync(spec.stdoutPath, 'latin1');
    expect(log).toBe('x'.repeat(2 * MIB) + logTruncationMarker(2 * MIB, total - 2 * MIB));
    expect(log.endsWith('\n[orrery: log truncated at 2 MiB; 47902848 more bytes were discarded]\n')).toBe(true);
    expect(readFileSync(spec.stderrPath, 'utf8')).toBe('done\n');
    // The tail is still the end of what the job printed (not the marker).
    expect(result.stdoutTail).toBe('x'.repeat(4096));
    for (const path of [spec.stdoutPath, spec.stderrPath]) expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('keep every byte under the cap although the job writes faster than the file (the pipe pauses and resumes)', async () => {
    const spec = io(64 * MIB);
    const total = 30_000_000;
    const result = await runShell({ ...spec, command: `head -c ${total} /dev/zero | tr '\\0' y`, env: {}, resultFile: join(dir, 'fast.json') }).done;
    expect(result.status).toBe('succeeded');
    expect(result.truncated).toBeUndefined();
    expect(statSync(spec.stdoutPath).size).toBe(total);
  });

  it('default to 64 MiB', () => {
    expect(DEFAULT_MAX_LOG_BYTES).toBe(64 * MIB);
  });
});

describe('Node runs', () => {
  const pool = createNodePool({ min: 1, max: 1 });
  afterAll(() => pool.close());

  it('cap the output the worker captures, with the marker, and the result counts the discarded bytes', async () => {
    const spec = io(1 * MIB);
    const total = 20 * MIB;
    const result = await pool.run({ ...spec, runId: 'flood-1', module: fixture('floods-output.ts'), context: { jobParam: String(total) } }).done;
    expect(result).toMatchObject({ status: 'succeeded', message: `wrote ${total}` });
    expect(result.truncated).toEqual({ stdout: total - MIB });
    const log = readFileSync(spec.stdoutPath, 'latin1');
    expect(log.length).toBe(MIB + logTruncationMarker(MIB, total - MIB).length);
    expect(log.endsWith(logTruncationMarker(MIB, total - MIB))).toBe(true);
    expect(readFileSync(spec.stderrPath, 'utf8')).toBe('flooded\n');
    for (const path of [spec.stdoutPath, spec.stderrPath]) expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('keep the output under the cap whole, and the next run of the same worker starts a fresh count', async () => {
    const spec = io(4 * MIB);
    const result = await pool.run({ ...spec, runId: 'flood-2', module: fixture('floods-output.ts'), context: { jobParam: String(3 * MIB) } }).done;
    expect(result.status).toBe('succeeded');
    expect(result.truncated).toBeUndefined();
    expect(statSync(spec.stdoutPath).size).toBe(3 * MIB);
  });
});

describe('--max-log-size', () => {
  const parse = (...args: string[]) => parseExecutorConfig(['--namespace', 'ns', '--name', 'e1', ...args], {});
  const problem = (...args: string[]): string => {
    try {
      parse(...args);
    } catch (error) {
      return toError(error).message;
    }
    return 'no error';
  };

  it('is MiB per stream, 64 by default', () => {
    expect(parse().maxLogBytes).toBe(64 * MIB);
    expect(parse('--max-log-size', '2').maxLogBytes).toBe(2 * MIB);
    expect(parse('--max-log-size', '4096').maxLogBytes).toBe(4096 * MIB);
  });

  it.each(['0', '4097', '1.5', 'lots', '-3'])('refuses %s, naming the flag and the range', (raw) => {
    expect(problem(`--max-log-size=${raw}`)).toBe(`--max-log-size: must be an integer from 1 to 4096 (got '${raw}')`);
  });

  it('has a usage line', () => {
    expect(EXECUTOR_USAGE).toContain('[--max-log-size MB]');
    expect(EXECUTOR_USAGE).toMatch(/--max-log-size {5}keep at most this many MiB/);
  });
});
