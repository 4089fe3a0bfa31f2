import { createHmac } from 'node:crypto';
import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { JwtVerifier, TokenRejected } from '../../../src/auth/jwt-verifier.js';
import { JWT_SECRET } from '../../support/fake-auth-o-tron.js';

/**
 * Security review (docs/security.md): the verifier pins HS256 and its one configured key, so no
 * header field can choose another algorithm or bring its own key. Complements jwt-verifier.test.ts
 * (other secret, HS384, `none`, RS256, tampering).
 */

const NOW_S = 1_750_000_000;
const verifier = new JwtVerifier(JWT_SECRET, () => NOW_S * 1000);
const CLAIMS = { username: 'admin-user', realm: 'localrealm', roles: ['admin'], exp: NOW_S + 3600 };

const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A compact token with exactly this header, MACed with HMAC-SHA256 under `secret`. */
function hmacToken(header: Record<string, unknown>, secret: string | Buffer = JWT_SECRET, claims: unknown = CLAIMS): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

async function rejected(token: string): Promise<boolean> {
  try {
    await verifier.verify(token);
    return false;
  } catch (error) {
    if (error instanceof TokenRejected) return true;
    throw error;
  }
}

describe('JWT algorithm pinning', () => {
  it('accepts the control: HS256 with the configured secret', async () => {
    expect(await rejected(hmacToken({ alg: 'HS256', typ: 'JWT' }))).toBe(false);
  });

  it.each([
    ['lower-case hs256', { alg: 'hs256' }],
    ['alg None (mixed case)', { alg: 'None' }],
    ['alg as an array', { alg: ['HS256'] }],
    ['no alg at all', { typ: 'JWT' }],
    ['alg null', { alg: null }],
  ])('rejects %s even with a valid HMAC-SHA256 under the real secret', async (_label, header) => {
    expect(await rejected(hmacToken(header))).toBe(true);
  });

  it('ignores an embedded jwk: an attacker key in the header does not verify', async () => {
    const attackerSecret = 'attacker-secret';
    const jwk = { kty: 'oct', k: Buffer.from(attackerSecret).toString('base64url') };
    expect(await rejected(hmacToken({ alg: 'HS256', jwk }, attackerSecret))).toBe(true);
    expect(await rejected(hmacToken({ alg: 'HS256', jku: 'http://127.0.0.1:1/keys', kid: 'x' }, attackerSecret))).toBe(true);
  });

  it('rejects algorithm confusion: an RSA public key used as the HMAC secret', async () => {
    const { publicKey } = await generateKeyPair('RS256', { extractable: true });
    const pem = JSON.stringify(await exportJWK(publicKey));
    expect(await rejected(hmacToken({ alg: 'HS256' }, pem))).toBe(true);
  });

  it('rejects an unknown critical header and an unencoded payload (b64: false)', async () => {
    expect(await rejected(hmacToken({ alg: 'HS256', crit: ['x-unknown'], 'x-unknown': 1 }))).toBe(true);
    const unencoded = await new CompactSign(new TextEncoder().encode(JSON.stringify(CLAIMS)))
      .setProtectedHeader({ alg: 'HS256', b64: false, crit: ['b64'] })
      .sign(new TextEncoder().encode(JWT_SECRET))
      .catch(() => undefined);
    if (unencoded !== undefined) expect(await rejected(unencoded)).toBe(true);
  });

  it('rejects a MAC truncated or extended by one byte', async () => {
    const token = hmacToken({ alg: 'HS256' });
    const [head, body, mac] = token.split('.') as [string, string, string];
    const bytes = Buffer.from(mac, 'base64url');
    expect(await rejected(`${head}.${body}.${bytes.subarray(0, -1).toString('base64url')}`)).toBe(true);
    expect(await rejected(`${head}.${body}.${Buffer.concat([bytes, Buffer.from([0])]).toString('base64url')}`)).toBe(true);
  });
});
