import { randomBytes } from 'node:crypto';

/** A fresh ZooKeeper root (chroot) for one test file or test, so tests never see each other's nodes. */
export function uniqueRoot(label: string): string {
  return `/test-${label.replace(/[^A-Za-z0-9_-]/g, '-')}-${randomBytes(4).toString('hex')}`;
}
