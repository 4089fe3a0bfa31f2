import { describe, expect, it } from 'vitest';
import { isRefusedCrossOrigin } from '../../../src/http/routes/cross-origin-writes.js';

/** docs/security.md, "Cross-site writes" and "DNS rebinding": which state-changing requests a browser context refuses. */
const OWN = 'https://aviso.example.org';
const LISTED = 'https://console.example.org';
const isOwn = (origin: string): boolean => origin === OWN;
const allows = (origin: string): boolean => origin === LISTED;

function refused(origin: string | undefined, fetchSite: string | undefined): boolean {
  return isRefusedCrossOrigin({ origin, fetchSite }, isOwn, allows);
}

describe('isRefusedCrossOrigin', () => {
  it('allows a request with neither Origin nor Sec-Fetch-Site: every client that is not a browser', () => {
    expect(refused(undefined, undefined)).toBe(false);
  });

  it('allows the server’s own origin and an origin the policy allows', () => {
    expect(refused(OWN, undefined)).toBe(false);
    expect(refused(OWN, 'same-origin')).toBe(false);
    expect(refused(LISTED, undefined)).toBe(false);
    expect(refused(LISTED, 'cross-site')).toBe(false);
  });

  it('refuses any other origin, `null` included', () => {
    expect(refused('https://stranger.example', undefined)).toBe(true);
    expect(refused('null', undefined)).toBe(true);
    expect(refused('https://aviso.example.org:8443', undefined)).toBe(true);
    expect(refused('http://aviso.example.org', 'cross-site')).toBe(true);
  });

  it('refuses another origin whatever Sec-Fetch-Site says: a rebound page is same-origin with the name it asked for', () => {
    expect(refused('http://evil.example:8000', 'same-origin')).toBe(true);
    expect(refused('http://evil.example:8000', 'none')).toBe(true);
    expect(refused('null', 'same-origin')).toBe(true);
    // Behind a proxy that terminates TLS the page's scheme is https: base_url says so, not the browser.
    expect(refused('http://aviso.example.org', 'same-origin')).toBe(true);
  });

  it('refuses Sec-Fetch-Site cross-site and same-site without an Origin', () => {
    expect(refused(undefined, 'cross-site')).toBe(true);
    expect(refused(undefined, 'same-site')).toBe(true);
    expect(refused(undefined, ' Same-Site ')).toBe(true);
  });

  it('allows Sec-Fetch-Site same-origin, none or an unknown value without an Origin', () => {
    expect(refused(undefined, 'same-origin')).toBe(false);
    expect(refused(undefined, 'none')).toBe(false);
    expect(refused(undefined, 'elsewhere')).toBe(false);
  });

  it('judges an unknown Sec-Fetch-Site value by the Origin alone', () => {
    expect(refused('https://stranger.example', 'elsewhere')).toBe(true);
    expect(refused(OWN, 'elsewhere')).toBe(false);
  });
});
