import { JsonNumber } from './json-value.js';

/**
 * Compact JSON with object keys sorted by code point, recursively (D1, docs/design/rules/streaming.md §3.4).
 * Accepts our lossless `JsonValue`s as well as plain values; numbers from requests keep their
 * source text, plain numbers use JavaScript's shortest round-trip form.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof JsonNumber) return value.source;
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'bigint':
      return value.toString();
    case 'object':
      break;
    default:
      return 'null';
  }
  if (Array.isArray(value)) {
    return `[${value.map((item: unknown) => canonicalJson(item)).join(',')}]`;
  }
  // Built in one loop: the identifier of every notify goes through here.
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort(compareCodePoints);
  let text = '{';
  for (const key of keys) {
    const item = object[key];
    if (item === undefined) continue;
    if (text.length > 1) text += ',';
    text += `${JSON.stringify(key)}:${canonicalJson(item)}`;
  }
  return `${text}}`;
}

/** Byte order of UTF-8 equals code-point order; JS `<` compares UTF-16 units, which differs above U+FFFF. */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  // Below U+D800 a UTF-16 unit is its code point, so the first differing unit decides; everything
  // before it is equal, surrogate pairs included. Only a surrogate there needs the slow path.
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 || y >= 0xd800) return compareByCodePoint(a, b);
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

function compareByCodePoint(a: string, b: string): number {
  const ai = a[Symbol.iterator]();
  const bi = b[Symbol.iterator]();
  for (;;) {
    const x = ai.next();
    const y = bi.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0) ?? 0;
    const cy = y.value.codePointAt(0) ?? 0;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}
