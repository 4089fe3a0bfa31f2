import { describe, expect, it } from 'vitest';
import { hasAnyRole, type AuthUser, type RoleMap } from '../../../src/auth/auth-user.js';

/** `hasAnyRole` of docs/design/rules/operations.md §2.6, rule by rule. */

function user(realm: string | undefined, roles: readonly string[]): AuthUser {
  return { username: 'someone', realm, roles, attributes: {} };
}

const MAP: RoleMap = { localrealm: ['admin', 'reader'], partner: ['producer'] };

describe('hasAnyRole (docs/design/rules/operations.md §2.6)', () => {
  it('1. an empty map grants everyone, even without realm or roles', () => {
    expect(hasAnyRole(user(undefined, []), {})).toBe(true);
    expect(hasAnyRole(user('localrealm', []), {})).toBe(true);
  });

  it('2. a user without realm matches no non-empty map, whatever the roles', () => {
    expect(hasAnyRole(user(undefined, ['admin', 'reader', '*']), MAP)).toBe(false);
    expect(hasAnyRole(user(undefined, ['admin']), { localrealm: ['*'] })).toBe(false);
  });

  it('3. a realm that is not a key of the map does not match, even with a listed role name', () => {
    expect(hasAnyRole(user('otherrealm', ['admin', 'reader', 'producer']), MAP)).toBe(false);
  });

  it('3. realm keys are exact and case-sensitive', () => {
    expect(hasAnyRole(user('LocalRealm', ['admin']), MAP)).toBe(false);
    expect(hasAnyRole(user('localrealm ', ['admin']), MAP)).toBe(false);
    expect(hasAnyRole(user('', ['admin']), MAP)).toBe(false);
  });

  it('3. inherited object properties are not realms', () => {
    expect(hasAnyRole(user('constructor', ['admin']), MAP)).toBe(false);
    expect(hasAnyRole(user('__proto__', ['admin']), MAP)).toBe(false);
    expect(hasAnyRole(user('toString', ['admin']), MAP)).toBe(false);
  });

  it('4. "*" grants every user of that realm, with or without roles', () => {
    const map: RoleMap = { localrealm: ['*'] };
    expect(hasAnyRole(user('localrealm', []), map)).toBe(true);
    expect(hasAnyRole(user('localrealm', ['anything']), map)).toBe(true);
    expect(hasAnyRole(user('localrealm', ['reader']), { localrealm: ['admin', '*'] })).toBe(true);
  });

  it('4. "*" never crosses realms', () => {
    const map: RoleMap = { localrealm: ['*'], partner: ['producer'] };
    expect(hasAnyRole(user('partner', ['reader']), map)).toBe(false);
    expect(hasAnyRole(user('otherrealm', ['admin']), map)).toBe(false);
    expect(hasAnyRole(user('otherrealm', ['*']), map)).toBe(false);
    expect(hasAnyRole(user(undefined, []), map)).toBe(false);
  });

  it('4. a role named "*" held by the user is not a wildcard', () => {
    expect(hasAnyRole(user('localrealm', ['*']), { localrealm: ['admin'] })).toBe(false);
  });

  it("5. any one of the user's roles equal to any listed role matches", () => {
    expect(hasAnyRole(user('localrealm', ['reader']), MAP)).toBe(true);
    expect(hasAnyRole(user('localrealm', ['nobody', 'admin']), MAP)).toBe(true);
    expect(hasAnyRole(user('partner', ['producer']), MAP)).toBe(true);
  });

  it("5. roles are only compared within the user's realm", () => {
    // `producer` is listed, but for `partner` only.
    expect(hasAnyRole(user('localrealm', ['producer']), MAP)).toBe(false);
    expect(hasAnyRole(user('partner', ['admin']), MAP)).toBe(false);
  });

  it('5. role comparison is exact and case-sensitive', () => {
    expect(hasAnyRole(user('localrealm', ['Admin']), MAP)).toBe(false);
    expect(hasAnyRole(user('localrealm', ['ADMIN']), MAP)).toBe(false);
    expect(hasAnyRole(user('localrealm', ['admin ']), MAP)).toBe(false);
    expect(hasAnyRole(user('localrealm', ['adm']), MAP)).toBe(false);
    expect(hasAnyRole(user('localrealm', ['administrator']), MAP)).toBe(false);
  });

  it('6. otherwise false: no roles, or none listed', () => {
    expect(hasAnyRole(user('localrealm', []), MAP)).toBe(false);
    expect(hasAnyRole(user('localrealm', ['producer', 'guest']), MAP)).toBe(false);
  });
});
