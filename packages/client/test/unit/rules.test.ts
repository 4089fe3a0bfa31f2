import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  retryAfterDelay,
  watchdogTimeout,
  RETRY_AFTER_CAP_MS,
  isSecureOrLoopback,
  EnvironmentAuth,
  ChainAuth,
  BearerAuth,
  parseCredentialsFile,
  AuthError,
} from '../../src/internal.js';

describe('supervisor timing rules', () => {
  it('backoff is full jitter below min(250 ms · 2^attempt, 30 s)', () => {
    expect(backoffDelay(0, () => 0.999)).toBe(249);
    expect(backoffDelay(3, () => 0.5)).toBe(1000);
    expect(backoffDelay(20, () => 0.999)).toBe(29_970);
    expect(backoffDelay(5, () => 0)).toBe(0);
  });
  it('Retry-After takes seconds or an HTTP date, capped at 5 minutes', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterDelay('7', now)).toBe(7000);
    expect(retryAfterDelay('3600', now)).toBe(RETRY_AFTER_CAP_MS);
    expect(retryAfterDelay('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterDelay(null, now)).toBeUndefined();
    expect(retryAfterDelay('soon', now)).toBeUndefined();
  });
  it('the watchdog is max(3 × interval, interval + 30 s)', () => {
    expect(watchdogTimeout(30_000)).toBe(90_000);
    expect(watchdogTimeout(5_000)).toBe(35_000);
    expect(watchdogTimeout(60_000)).toBe(180_000);
  });
});

describe('auth providers', () => {
  it('environment: AVISO_TOKEN, else AVISO_USERNAME + AVISO_PASSWORD, re-read on refresh', async () => {
    const env: Record<string, string | undefined> = { AVISO_USERNAME: 'alice', AVISO_PASSWORD: 'wonderland' };
    const auth = new EnvironmentAuth(env);
    expect(await auth.authorization()).toBe(`Basic ${Buffer.from('alice:wonderland').toString('base64')}`);
    env.AVISO_TOKEN = 't1';
    await auth.refresh();
    expect(await auth.authorization()).toBe('Bearer t1');
    expect(auth.discovered).toBe(true);
  });
  it('credentials file: exactly one of bearer/basic, unknown keys rejected', () => {
    expect(parseCredentialsFile('bearer:\n  token: "abc"\n', 'f')).toBe('Bearer abc');
    expect(parseCredentialsFile('basic:\n  username: a\n  password: b\n', 'f')).toBe(`Basic ${btoa('a:b')}`);
    expect(() => parseCredentialsFile('bearer:\n  token: a\nbasic:\n  username: a\n  password: b\n', 'f')).toThrow(AuthError);
    expect(() => parseCredentialsFile('bearer:\n  tokn: a\n', 'f')).toThrow('unknown key bearer.tokn');
  });
  it('chain: the first member with a header wins, and it decides "discovered"', async () => {
    const chain = new ChainAuth([new EnvironmentAuth({}), new BearerAuth('explicit')]);
    expect(await chain.authorization()).toBe('Bearer explicit');
    expect(chain.discovered).toBe(false);
  });
  it('only https and loopback count as safe for a discovered credential', () => {
    expect(isSecureOrLoopback(new URL('https://x.org'))).toBe(true);
    expect(isSecureOrLoopback(new URL('http://127.0.0.1:8000'))).toBe(true);
    expect(isSecureOrLoopback(new URL('http://[::1]:8000'))).toBe(true);
    expect(isSecureOrLoopback(new URL('http://localhost'))).toBe(true);
    expect(isSecureOrLoopback(new URL('http://example.org'))).toBe(false);
    // The aviso client's rule: *.localhost is loopback, an IPv4-mapped address and private ranges are not.
    expect(isSecureOrLoopback(new URL('http://aviso.localhost:8000'))).toBe(true);
    expect(isSecureOrLoopback(new URL('http://[0:0:0:0:0:0:0:1]:8000'))).toBe(true);
    expect(isSecureOrLoopback(new URL('http://[::ffff:127.0.0.1]:8000'))).toBe(false);
    expect(isSecureOrLoopback(new URL('http://10.0.0.5:8000'))).toBe(false);
  });
});
