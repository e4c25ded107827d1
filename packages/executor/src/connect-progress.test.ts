import { describe, expect, it } from 'vitest';
import { zkConnectTarget } from './connect-progress.js';

describe('zkConnectTarget', () => {
  it.each<[string, string]>([
    ['127.0.0.1:2181', '127.0.0.1:2181'],
    ['a:2181,b:2181,c:2181/chroot', 'a:2181,b:2181,c:2181/chroot'],
    ['user:secret@zk1:2181', 'zk1:2181'],
    ['u:p@a:1,b:2,x:y@c:3/ch@root', 'a:1,b:2,c:3/ch@root'],
    ['weird@pass@host:1', 'host:1'],
    ['', ''],
  ])('%j → %j', (connect, expected) => {
    expect(zkConnectTarget(connect)).toBe(expected);
  });
});
