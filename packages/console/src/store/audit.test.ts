// The audit log: secrets redacted at any depth, big values cut with a marker, bounded entries,
// the oldest pruned beyond the bound, listings filtered and paged newest first; and entries on a
// real ZooKeeper in sequence order.
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createZkClient, paths, type ZkClient } from '@orrery/core';
import { uniqueRoot } from '@orrery/core/testing';
import {
  AUDIT_ENTRY_MAX_BYTES,
  AUDIT_VALUE_MAX_BYTES,
  REDACTED,
  appendAudit,
  auditEntriesToPrune,
  auditSequence,
  buildAuditRecord,
  checkAuditRecord,
  cutValue,
  pruneAudit,
  redactSecrets,
  selectAudit,
  type AuditEntryView,
} from './audit.js';

describe('audit entries', () => {
  it('never hold a secret, however deep', () => {
    const input = { name: 'ann', password: 'p', nested: [{ passwordHash: 'h', Token: 't', ok: 1 }], headers: { Authorization: 'Bearer x', cookie: 'c' }, tokenId: 'kept' };
    expect(redactSecrets(input)).toEqual({ name: 'ann', password: REDACTED, nested: [{ passwordHash: REDACTED, Token: REDACTED, ok: 1 }], headers: { Authorization: REDACTED, cookie: REDACTED }, tokenId: 'kept' });
  });

  it('cut a big value to a marker with its size and a preview, and keep small ones whole', () => {
    expect(cutValue({ a: 1 })).toEqual({ a: 1 });
    const big = { cron: '0 * * * * *', script: 'x'.repeat(10_000) };
    const cut = cutValue(big) as { truncated: boolean; bytes: number; preview: string };
    expect(cut).toMatchObject({ truncated: true, bytes: JSON.stringify(big).length });
    expect(cut.preview.startsWith('{"cron":"0 * * * * *"')).toBe(true);
    expect(JSON.stringify(cut).length).toBeLessThanOrEqual(AUDIT_VALUE_MAX_BYTES);
    const wide = cutValue({ s: '漢'.repeat(5000) }) as { preview: string };
    expect(wide.preview).not.toMatch(/\uFFFD/);
  });

  it('stay under the entry bound whatever they are given', () => {
    const huge = { v: 'y'.repeat(100_000) };
    const record = buildAuditRecord({ at: 1, user: 'u'.repeat(1000), via: 'token', tokenId: 'abc', ip: '::1', action: 'job.update', namespace: 'n', job: 'j', target: 't'.repeat(5000), before: huge, after: huge, details: huge });
    expect(Buffer.byteLength(JSON.stringify(record))).toBeLessThanOrEqual(AUDIT_ENTRY_MAX_BYTES);
    expect(checkAuditRecord(record).ok).toBe(true);
    expect(record.user!.length).toBeLessThanOrEqual(256);
  });

  it('prune the oldest beyond the bound', () => {
    const names = ['entry-0000000005', 'entry-0000000001', 'junk', 'entry-0000000003', 'entry-0000000004'];
    expect(auditEntriesToPrune(names, 4)).toEqual([]);
    expect(auditEntriesToPrune(names, 2)).toEqual(['entry-0000000001', 'entry-0000000003']);
    expect(auditSequence('entry-0000000042')).toBe(42);
    expect(auditSequence('entry-42')).toBeUndefined();
  });

  it('list newest first, filtered, paged by the before cursor, only what the caller may see', () => {
    const e = (id: number, extra: Partial<AuditEntryView> = {}): AuditEntryView => ({ id, at: id, user: 'ann', via: 'session', ip: '::1', action: 'job.update', namespace: 'shop', ...extra });
    const all = [e(1), e(2, { namespace: 'bank' }), e(3, { job: 'a' }), e(4, { user: 'bob' }), e(5), e(6, { namespace: undefined, action: 'user.create' })];
    const everything = () => true;
    expect(selectAudit(all, { limit: 10, visible: everything }).entries.map((x) => x.id)).toEqual([6, 5, 4, 3, 2, 1]);
    const page1 = selectAudit(all, { limit: 2, visible: everything });
    expect(page1).toMatchObject({ next: 5 });
    expect(page1.entries.map((x) => x.id)).toEqual([6, 5]);
    expect(selectAudit(all, { limit: 2, before: page1.next, visible: everything }).entries.map((x) => x.id)).toEqual([4, 3]);
    expect(selectAudit(all, { limit: 10, namespace: 'shop', user: 'ann', visible: everything }).entries.map((x) => x.id)).toEqual([5, 3, 1]);
    expect(selectAudit(all, { limit: 10, job: 'a', visible: everything }).entries.map((x) => x.id)).toEqual([3]);
    expect(selectAudit(all, { limit: 10, action: 'user.create', visible: everything }).entries.map((x) => x.id)).toEqual([6]);
    const shopOwner = selectAudit(all, { limit: 10, visible: (x) => x.namespace === 'shop' });
    expect(shopOwner.entries.map((x) => x.id)).toEqual([5, 4, 3, 1]);
    expect(shopOwner.next).toBeUndefined();
  });
});

describe('the audit log in ZooKeeper', () => {
  const zkConnect = inject('zkConnect');
  let zk: ZkClient;
  beforeAll(async () => {
    zk = createZkClient({ connect: zkConnect, root: uniqueRoot('audit-store') });
    await zk.start();
  });
  afterAll(async () => {
    await zk.close();
  });

  it('appends in sequence order (creating its parent) and prunes the oldest', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i += 1) ids.push(await appendAudit(zk, buildAuditRecord({ at: i, user: 'ann', via: 'session', ip: '::1', action: `a${i}` })));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    const names = await zk.getChildren(paths.consoleAudit());
    expect(names).toHaveLength(5);
    expect(await pruneAudit(zk, auditEntriesToPrune(names, 3))).toBe(2);
    expect(await pruneAudit(zk, auditEntriesToPrune(names, 3))).toBe(0); // already gone: fine
    const left = (await zk.getChildren(paths.consoleAudit())).map((n) => auditSequence(n)).sort((a, b) => a! - b!);
    expect(left).toEqual(ids.slice(2));
  });
});
