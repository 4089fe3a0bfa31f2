import { describe, expect, it } from 'vitest';
import { isRefusedCrossOrigin, ownOriginOf } from '../../../src/http/cross-origin-writes.js';

/** docs/security.md, "Cross-site writes": which state-changing requests a browser context refuses. */
const OWN = 'https://aviso.example.org';
const LISTED = 'https://console.example.org';
const allows = (origin: string): boolean => origin === LISTED;

function refused(origin: string | undefined, fetchSite: string | undefined): boolean {
  return isRefusedCrossOrigin({ origin, fetchSite }, OWN, allows);
}

describe('isRefusedCrossOrigin', () => {
  it('allows a request with neither Origin nor Sec-Fetch-Site: every client that is not a browser', () => {
    expect(refused(undefined, undefined)).toBe(false);
  });

  it('allows the request’s own origin and an origin the policy allows', () => {
    expect(refused(OWN, undefined)).toBe(false);
    expect(refused(LISTED, undefined)).toBe(false);
    expect(refused(LISTED, 'cross-site')).toBe(false);
  });

  it('refuses any other origin, `null` included', () => {
    expect(refused('https://stranger.example', undefined)).toBe(true);
    expect(refused('null', undefined)).toBe(true);
    expect(refused('https://aviso.example.org:8443', undefined)).toBe(true);
    expect(refused('http://aviso.example.org', 'cross-site')).toBe(true);
  });

  it('refuses Sec-Fetch-Site cross-site and same-site without an Origin', () => {
    expect(refused(undefined, 'cross-site')).toBe(true);
    expect(refused(undefined, 'same-site')).toBe(true);
    expect(refused(undefined, ' Same-Site ')).toBe(true);
  });

  it('allows Sec-Fetch-Site same-origin and none, whatever the Origin (the browser vouches: a TLS-terminating proxy changes the scheme)', () => {
    expect(refused(undefined, 'same-origin')).toBe(false);
    expect(refused(undefined, 'none')).toBe(false);
    expect(refused('http://aviso.example.org', 'same-origin')).toBe(false);
  });

  it('judges an unknown Sec-Fetch-Site value by the Origin alone', () => {
    expect(refused(undefined, 'elsewhere')).toBe(false);
    expect(refused('https://stranger.example', 'elsewhere')).toBe(true);
  });
});

describe('ownOriginOf', () => {
  it('is the origin a browser names: lower case, the default port left out', () => {
    expect(ownOriginOf('https', 'Aviso.Example.org:443')).toBe('https://aviso.example.org');
    expect(ownOriginOf('http', '127.0.0.1:8000')).toBe('http://127.0.0.1:8000');
    expect(ownOriginOf('https', '[::1]:8443')).toBe('https://[::1]:8443');
  });

  it('is undefined for a missing or unusable Host', () => {
    expect(ownOriginOf('http', '')).toBeUndefined();
    expect(ownOriginOf('http', 'a b')).toBeUndefined();
  });
});
