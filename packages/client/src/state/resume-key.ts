import canonicalize from 'canonicalize';
import { ConfigError } from '../errors.js';
import type { Identifier } from '../types.js';

/**
 * The hash-input recipe version written to a new state file: 1, the recipe of the released aviso
 * client, whose documentation's worked example this reproduces (docs/client.md, "State file").
 */
export const KEY_FORMAT_VERSION = 1;

/**
 * The recipes this client computes, so a state file written by either aviso revision is read, not
 * discarded: 1 (released) and 2 (the same length-prefixed framing under a new number, in the newer
 * revisions of the aviso client). They differ only in the version number that starts the input.
 */
export const KEY_FORMAT_VERSIONS: readonly number[] = [1, 2];

/**
 * The aviso client's normalised base URL: scheme and host lower-cased, default port dropped,
 * user info, query and fragment removed (the WHATWG serialisation, so `https://h` → `https://h/`).
 */
export function normaliseBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  return url.href;
}

const encoder = new TextEncoder();

function lengthPrefixed(text: string): Uint8Array {
  const bytes = encoder.encode(text);
  const framed = new Uint8Array(8 + bytes.length);
  new DataView(framed.buffer).setBigUint64(0, BigInt(bytes.length), true);
  framed.set(bytes, 8);
  return framed;
}

/**
 * The resume key exactly as the aviso client computes it (its state-file internals page):
 * lower-case hex SHA-256 over `key_format_version` as u32 LE, then the normalised base URL, the
 * event type and the RFC 8785 canonical filter JSON, each preceded by its byte length as u64 LE,
 * then one zero byte for "no schema fingerprint". WebCrypto, so it runs in browsers too.
 */
export async function resumeKey(baseUrl: string, eventType: string, identifier: Identifier = {}, keyFormatVersion = KEY_FORMAT_VERSION): Promise<string> {
  if (!KEY_FORMAT_VERSIONS.includes(keyFormatVersion)) throw new ConfigError(`unknown key_format_version ${keyFormatVersion}`);
  const filter = canonicalize(identifier);
  if (filter === undefined) throw new ConfigError('the watch filter cannot be canonicalised');
  const version = new Uint8Array(4);
  new DataView(version.buffer).setUint32(0, keyFormatVersion, true);
  const parts = [version, lengthPrefixed(normaliseBaseUrl(baseUrl)), lengthPrefixed(eventType), lengthPrefixed(filter), new Uint8Array([0])];
  const input = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    input.set(part, offset);
    offset += part.length;
  }
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', input));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
