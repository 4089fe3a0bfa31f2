/**
 * Percent-encoding of topic tokens (docs/design/rules/schema-and-validation.md §7.3, D20). The four characters the
 * reference encodes are encoded exactly as it does; whitespace and control characters are encoded
 * too so that every accepted value is also a valid NATS subject token.
 */

const RESERVED: Readonly<Record<string, string>> = { '.': '%2E', '*': '%2A', '>': '%3E', '%': '%25' };
const NEEDS_ENCODING = /[.*>%\s\p{Cc}]/u;
const NEEDS_ENCODING_GLOBAL = /[.*>%\s\p{Cc}]/gu;

export class TopicDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TopicDecodeError';
  }
}

export function encodeToken(token: string): string {
  if (!NEEDS_ENCODING.test(token)) return token;
  return token.replace(NEEDS_ENCODING_GLOBAL, (c) => RESERVED[c] ?? utf8Percent(c));
}

function utf8Percent(char: string): string {
  let out = '';
  for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Strict single-pass decoding: every `%` needs two hex digits and the bytes must be UTF-8. */
export function decodeToken(token: string): string {
  const firstEscape = token.indexOf('%');
  if (firstEscape < 0) return token;
  return decodeReservedEscapes(token, firstEscape) ?? decodeBytes(token);
}

/**
 * The common case, decoded directly: tokens whose only escapes are the four reserved characters
 * (every stored value with a `.` in it). `undefined` for any other escape, left to `decodeBytes`.
 */
function decodeReservedEscapes(token: string, firstEscape: number): string | undefined {
  let decoded = '';
  let from = 0;
  for (let at = firstEscape; at >= 0; at = token.indexOf('%', from)) {
    const char = reservedChar(token.charCodeAt(at + 1), token.charCodeAt(at + 2));
    if (char === undefined) return undefined;
    decoded += token.slice(from, at) + char;
    from = at + 3;
  }
  return decoded + token.slice(from);
}

/** `%2E` `.`, `%2A` `*`, `%25` `%`, `%3E` `>` (hex digits in either case); NaN past the end. */
function reservedChar(high: number, low: number): string | undefined {
  if (high === 0x32) {
    if (low === 0x45 || low === 0x65) return '.';
    if (low === 0x41 || low === 0x61) return '*';
    if (low === 0x35) return '%';
  } else if (high === 0x33 && (low === 0x45 || low === 0x65)) {
    return '>';
  }
  return undefined;
}

function decodeBytes(token: string): string {
  const bytes: number[] = [];
  const raw = Buffer.from(token, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i] as number;
    if (byte !== 0x25) {
      bytes.push(byte);
      continue;
    }
    if (i + 2 >= raw.length) {
      throw new TopicDecodeError(`Invalid percent-encoding: trailing '%' in token '${token}'`);
    }
    const hi = hexValue(raw[i + 1] as number);
    const lo = hexValue(raw[i + 2] as number);
    if (hi < 0 || lo < 0) {
      const bad = hi < 0 ? raw.subarray(i + 1, i + 2) : raw.subarray(i + 2, i + 3);
      throw new TopicDecodeError(`Invalid percent-encoding: non-hex '${firstChar(raw, bad)}' in token '${token}'`);
    }
    bytes.push(hi * 16 + lo);
    i += 2;
  }
  try {
    return utf8.decode(Uint8Array.from(bytes));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new TopicDecodeError(`Decoded token is not valid UTF-8 ('${token}'): ${reason}`);
  }
}

/** The offending character for the message, whole even when it is a multi-byte UTF-8 sequence. */
function firstChar(raw: Buffer, bad: Buffer): string {
  const start = bad.byteOffset - raw.byteOffset;
  return [...raw.subarray(start).toString('utf8')][0] ?? '';
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x41 + 10;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  return -1;
}

export function encodeTopic(tokens: readonly string[]): string {
  return tokens.map(encodeToken).join('.');
}

export function decodeTopic(wire: string): string[] {
  return wire.split('.').map(decodeToken);
}

/** Display form (decoded tokens joined by `.`), falling back to the wire subject (docs/design/rules/schema-and-validation.md §7.3). */
export function displayTopic(wire: string): string {
  try {
    return decodeTopic(wire).join('.');
  } catch {
    return wire;
  }
}
