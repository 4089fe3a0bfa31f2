import type { IncomingHttpHeaders } from 'node:http';

/**
 * The `Idempotency-Key` request header of notify (docs/api.md "Idempotent notify"): an RFC 8941
 * sf-string or the bare text, 1 to 255 visible ASCII characters once unquoted, sent once.
 */

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export type IdempotencyKeyHeader =
  { readonly kind: 'absent' } | { readonly kind: 'key'; readonly key: string } | { readonly kind: 'malformed' };

const ABSENT: IdempotencyKeyHeader = { kind: 'absent' };
const MALFORMED: IdempotencyKeyHeader = { kind: 'malformed' };

/**
 * Reads the header from the raw name/value list, because Node joins a repeated unknown header
 * into one value with `, ` and a key may itself contain `, `: only the raw list tells "sent twice".
 */
export function readIdempotencyKey(rawHeaders: readonly string[], headers?: IncomingHttpHeaders): IdempotencyKeyHeader {
  let value: string | undefined;
  let count = 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] as string).toLowerCase() !== IDEMPOTENCY_KEY_HEADER) continue;
    count++;
    value = rawHeaders[i + 1];
  }
  if (count === 0) {
    // HTTP/2's compatibility layer may hand over no raw list; its header object holds one value then.
    const fromObject = headers?.[IDEMPOTENCY_KEY_HEADER];
    if (fromObject === undefined) return ABSENT;
    if (Array.isArray(fromObject)) return MALFORMED;
    value = fromObject;
    count = 1;
  }
  if (count > 1 || value === undefined) return MALFORMED;
  const key = parseIdempotencyKey(value);
  return key === undefined ? MALFORMED : { kind: 'key', key };
}

/** The key of one header value, or undefined when it is malformed. */
export function parseIdempotencyKey(raw: string): string | undefined {
  // Optional whitespace around a field value is not part of it (RFC 9110, section 5.5).
  const value = raw.replace(/^[ \t]+|[ \t]+$/g, '');
  const key = value.startsWith('"') ? unquoteSfString(value) : value;
  if (key === undefined || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) return undefined;
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    if (code < 0x21 || code > 0x7e) return undefined;
  }
  return key;
}

/** RFC 8941, section 4.2.5: `"`, then printable ASCII with `\"` and `\\` as the only escapes, then `"` ending the value. */
function unquoteSfString(value: string): string | undefined {
  let text = '';
  for (let i = 1; i < value.length; i++) {
    const char = value[i] as string;
    const code = value.charCodeAt(i);
    if (char === '\\') {
      const next = value[i + 1];
      if (next !== '"' && next !== '\\') return undefined;
      text += next;
      i++;
    } else if (char === '"') {
      return i === value.length - 1 ? text : undefined;
    } else if (code < 0x20 || code > 0x7e) {
      return undefined;
    } else {
      text += char;
    }
  }
  return undefined;
}
