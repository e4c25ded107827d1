import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ZK, describeZkSource, findLocalPlatform, resolveZkConnect } from './zk-connect.js';

/** A folder tree: root/.orrery/local.json holding `content` (when given), and root/a/b. */
function tree(content?: string): { root: string; deep: string } {
  const root = mkdtempSync(join(tmpdir(), 'zk-connect-'));
  const deep = join(root, 'a', 'b');
  mkdirSync(deep, { recursive: true });
  if (content !== undefined) {
    mkdirSync(join(root, '.orrery'));
    writeFileSync(join(root, '.orrery', 'local.json'), content);
  }
  return { root, deep };
}

describe('resolveZkConnect', () => {
  const withFile = tree(JSON.stringify({ zk: '127.0.0.1:40123', console: 'http://127.0.0.1:8080' }));
  const without = tree();

  it.each<[string, string | undefined, Record<string, string>, string, string, string]>([
    ['the flag wins over everything', 'zk1:2181', { ORRERY_ZK: 'env:1' }, withFile.deep, 'zk1:2181', '--zk'],
    ['then ORRERY_ZK', undefined, { ORRERY_ZK: 'env:1' }, withFile.deep, 'env:1', 'ORRERY_ZK'],
    ['an empty ORRERY_ZK is unset', undefined, { ORRERY_ZK: '' }, without.deep, DEFAULT_ZK, 'default'],
    ['then npm start\'s file, found from a folder below it', undefined, {}, withFile.deep, '127.0.0.1:40123', join(withFile.root, '.orrery', 'local.json')],
    ['else the default', undefined, {}, without.deep, DEFAULT_ZK, 'default'],
  ])('%s', (_label, flag, env, cwd, connect, source) => {
    expect(resolveZkConnect(flag, env, cwd)).toEqual({ connect, source });
  });

  it.each([
    ['not JSON', '{'],
    ['no zk', '{"console":"http://x"}'],
    ['a zk that is not host:port pairs', '{"zk":"127.0.0.1:2181; rm -rf /"}'],
    ['a number', '42'],
  ])('ignores a local file that is %s (the default then)', (_label, content) => {
    const t = tree(content);
    expect(findLocalPlatform(t.deep)).toBeUndefined();
    expect(resolveZkConnect(undefined, {}, t.deep)).toEqual({ connect: DEFAULT_ZK, source: 'default' });
  });

  it('keeps only a console URL that is http(s)', () => {
    const t = tree(JSON.stringify({ zk: 'a:1,b:2', console: 'javascript:alert(1)' }));
    expect(findLocalPlatform(t.root)?.platform).toEqual({ zk: 'a:1,b:2' });
  });

  it('says where an address came from', () => {
    expect(describeZkSource('default')).toContain('no --zk, no ORRERY_ZK');
    expect(describeZkSource('ORRERY_ZK')).toBe('from ORRERY_ZK');
    expect(describeZkSource('/x/.orrery/local.json')).toBe('from /x/.orrery/local.json, written by npm start — is it running?');
  });
});
