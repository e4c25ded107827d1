import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLazyFile, createLogCap, formatLogSize, logTruncation, logTruncationMarker } from './lazy-file.js';

const dir = mkdtempSync(join(tmpdir(), 'orrery-lazy-file-'));

describe('log cap rules', () => {
  it.each([
    [64 * 1024 * 1024, '64 MiB'],
    [2 * 1024 * 1024, '2 MiB'],
    [1536 * 1024, '1.5 MiB'],
    [4 * 1024 ** 3, '4 GiB'],
    [12 * 1024, '12 KiB'],
    [100, '100 bytes'],
  ])('formats %i bytes as %s', (bytes, text) => {
    expect(formatLogSize(bytes)).toBe(text);
  });

  it('writes one marker line naming the cap and the bytes discarded', () => {
    expect(logTruncationMarker(64 * 1024 * 1024, 1234)).toBe('\n[orrery: log truncated at 64 MiB; 1234 more bytes were discarded]\n');
  });

  it('takes what fits and counts the rest', () => {
    const cap = createLogCap(10);
    expect(cap.take(Buffer.from('abcdef')).toString()).toBe('abcdef');
    expect(cap.take(Buffer.from('ghijkl')).toString()).toBe('ghij');
    expect(cap.take(Buffer.from('mn')).length).toBe(0);
    cap.drop(Buffer.from('xyz'));
    expect({ written: cap.written, discarded: cap.discarded }).toEqual({ written: 10, discarded: 7 });
  });

  it.each([
    [0, 0, undefined],
    [5, 0, { stdout: 5 }],
    [0, 7, { stderr: 7 }],
    [5, 7, { stdout: 5, stderr: 7 }],
  ])('truncation of (%i, %i) is %j', (out, err, expected) => {
    expect(logTruncation(out, err)).toEqual(expected);
  });
});

describe('capped log file', () => {
  it('creates no file for a run that prints nothing', async () => {
    const path = join(dir, 'silent.log');
    expect(await createLazyFile(path).end()).toBe(0);
    expect(existsSync(path)).toBe(false);
  });

  it('keeps everything under the cap, private (0600), with no marker', async () => {
    const path = join(dir, 'small.log');
    const file = createLazyFile(path, { maxBytes: 100 });
    file.write(Buffer.from('hello\n'));
    expect(await file.end()).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe('hello\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('stops at the cap and ends with the marker counting every byte discarded', async () => {
    const path = join(dir, 'big.log');
    const file = createLazyFile(path, { maxBytes: 1024 });
    for (let i = 0; i < 100; i += 1) file.write(Buffer.alloc(100, 'a'));
    expect(file.discarded).toBe(100 * 100 - 1024);
    expect(await file.end()).toBe(100 * 100 - 1024);
    expect(readFileSync(path, 'utf8')).toBe('a'.repeat(1024) + logTruncationMarker(1024, 100 * 100 - 1024));
  });

  it('reports back-pressure while its buffer is full, and calls onDrain once it empties', async () => {
    const path = join(dir, 'pressure.log');
    const file = createLazyFile(path, { maxBytes: 10 * 1024 * 1024 });
    let full = false;
    for (let i = 0; i < 64 && !full; i += 1) full = !file.write(Buffer.alloc(64 * 1024, 'b'));
    expect(full).toBe(true);
    await new Promise<void>((resolve) => file.onDrain(resolve));
    // Past the cap nothing is buffered: writes never ask to wait.
    const capped = createLazyFile(join(dir, 'capped.log'), { maxBytes: 1 });
    capped.write(Buffer.from('x'));
    expect(Array.from({ length: 100 }, () => capped.write(Buffer.alloc(64 * 1024))).every(Boolean)).toBe(true);
    await Promise.all([file.end(), capped.end()]);
  });

  it('never throws when the file cannot be written: the output is discarded and onError told once', async () => {
    const errors: Error[] = [];
    let failed!: () => void;
    const failure = new Promise<void>((resolve) => { failed = resolve; });
    const file = createLazyFile(join(dir, 'no-such-folder', 'x.log'), { maxBytes: 100_000, onError: (e) => { errors.push(e); failed(); } });
    // Enough to fill the buffer: the writer waits for a drain, which the error releases.
    const full = !file.write(Buffer.alloc(64 * 1024, 'l'));
    expect(full).toBe(true);
    await new Promise<void>((resolve) => file.onDrain(resolve));
    await failure;
    file.write(Buffer.from('lost too\n'));
    await file.end();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toContain('ENOENT');
    expect(file.discarded).toBeGreaterThanOrEqual('lost too\n'.length);
  });
});
