import { describe, expect, it } from 'vitest';
import { cookieValue } from '../../../src/auth/browser-cookie.js';

/** `auth.browser_cookie` reads one cookie of the `Cookie` header (docs/design/rules/browser.md §1). */
describe('cookieValue', () => {
  it('finds the named cookie among others', () => {
    expect(cookieValue('a=1; aviso_token=abc.def.ghi; b=2', 'aviso_token')).toBe('abc.def.ghi');
    expect(cookieValue('aviso_token=x', 'aviso_token')).toBe('x');
  });

  it('does not match a cookie whose name only contains the name', () => {
    expect(cookieValue('my_aviso_token=x; aviso_token_old=y', 'aviso_token')).toBeUndefined();
  });

  it('removes surrounding double quotes', () => {
    expect(cookieValue('aviso_token="abc"', 'aviso_token')).toBe('abc');
  });

  it('answers undefined without a Cookie header or without the cookie', () => {
    expect(cookieValue(undefined, 'aviso_token')).toBeUndefined();
    expect(cookieValue('other=1', 'aviso_token')).toBeUndefined();
  });
});
