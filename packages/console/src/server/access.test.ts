import { describe, expect, it } from 'vitest';
import { decideAccess, hasRole, type Access, type Principal } from './access.js';

const user = (roles: Principal['roles'], admin = false): Principal => ({ user: 'u', admin, roles, via: 'session' });

describe('decideAccess', () => {
  it.each<[string, Access, Principal | undefined, string | undefined, string]>([
    ['public, nobody', { level: 'public' }, undefined, undefined, 'allowed'],
    ['user, nobody', { level: 'user' }, undefined, undefined, 'unauthenticated'],
    ['user, someone', { level: 'user' }, user({}), undefined, 'allowed'],
    ['admin, a viewer', { level: 'admin' }, user({ shop: 'owner' }), 'shop', 'forbidden'],
    ['admin, an admin', { level: 'admin' }, user({}, true), undefined, 'allowed'],
    ['viewer, nobody', { level: 'viewer' }, undefined, 'shop', 'unauthenticated'],
    ['viewer, no role there', { level: 'viewer' }, user({ other: 'owner' }), 'shop', 'forbidden'],
    ['viewer, a viewer', { level: 'viewer' }, user({ shop: 'viewer' }), 'shop', 'allowed'],
    ['operator, a viewer', { level: 'operator' }, user({ shop: 'viewer' }), 'shop', 'forbidden'],
    ['operator, an operator', { level: 'operator' }, user({ shop: 'operator' }), 'shop', 'allowed'],
    ['operator, an owner', { level: 'operator' }, user({ shop: 'owner' }), 'shop', 'allowed'],
    ['owner, an operator', { level: 'owner' }, user({ shop: 'operator' }), 'shop', 'forbidden'],
    ['owner, an admin', { level: 'owner' }, user({}, true), 'shop', 'allowed'],
    ['namespaced route without a namespace, a user', { level: 'viewer' }, user({ shop: 'owner' }), undefined, 'forbidden'],
  ])('%s', (_label, access, principal, namespace, verdict) => {
    expect(decideAccess(access, principal, namespace)).toBe(verdict);
  });

  it('orders roles: owner ⊇ operator ⊇ viewer', () => {
    const owner = user({ shop: 'owner' });
    expect(['viewer', 'operator', 'owner'].map((r) => hasRole(owner, 'shop', r as 'viewer'))).toEqual([true, true, true]);
    const viewer = user({ shop: 'viewer' });
    expect(['viewer', 'operator', 'owner'].map((r) => hasRole(viewer, 'shop', r as 'viewer'))).toEqual([true, false, false]);
  });
});
