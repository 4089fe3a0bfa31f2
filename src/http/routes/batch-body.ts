import { isJsonObject, jsonKind, type JsonObject, type JsonValue } from '../../json/json-value.js';
import { JsonSyntaxError, parseJsonBody } from '../../json/lossless-parse.js';
import { batchEmptyError, batchItemNotAnObjectError, batchNotAnArrayError, batchTooManyItemsError, requestError } from './error-bodies.js';

/** The media type that makes batch notify read one notification per line (docs/api.md#batch-notify-decision-d48). */
const NDJSON_MEDIA_TYPE = 'application/x-ndjson';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export interface BatchItems {
  readonly items: JsonObject[];
  /** Each item's size in bytes, from its first to its last byte: the body it would be sent alone. */
  readonly bytes: number[];
}

/**
 * The notifications of a batch notify body, or the refusal of the whole batch (D48), checked in
 * this order: JSON syntax (of the body, or of each line), an array, not empty, at most
 * `maxItems`, every item an object. What each item holds is left to the single endpoint's steps.
 */
export function readBatchBody(body: Buffer | undefined, contentType: string | undefined, maxItems: number): BatchItems {
  const { values, bytes } = isNdjson(contentType) ? parseLines(body ?? Buffer.alloc(0)) : parseArray(body ?? Buffer.alloc(0));
  if (values.length === 0) throw batchEmptyError();
  if (values.length > maxItems) throw batchTooManyItemsError(values.length, maxItems);
  values.forEach((item, index) => {
    if (!isJsonObject(item)) throw batchItemNotAnObjectError(index, kindOf(item));
  });
  return { items: values as JsonObject[], bytes };
}

function isNdjson(contentType: string | undefined): boolean {
  const mediaType = contentType?.split(';', 1)[0]?.trim().toLowerCase();
  return mediaType === NDJSON_MEDIA_TYPE;
}

function parseArray(body: Buffer): { values: JsonValue[]; bytes: number[] } {
  const value = parsed(body, 'JSON parsing failed');
  if (!Array.isArray(value)) throw batchNotAnArrayError(kindOf(value));
  return { values: value, bytes: elementSizes(body) };
}

/** One JSON value a line; lines holding only whitespace are skipped (a trailing newline, say). */
function parseLines(body: Buffer): { values: JsonValue[]; bytes: number[] } {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw invalidJson('JSON parsing failed', 'request body is not valid UTF-8');
  }
  const values: JsonValue[] = [];
  const bytes: number[] = [];
  text.split('\n').forEach((line, index) => {
    const item = line.trim();
    if (item === '') return;
    values.push(parsed(line, `JSON parsing failed on line ${index + 1}`));
    bytes.push(Buffer.byteLength(item));
  });
  return { values, bytes };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPENERS = new Set([0x5b, 0x7b]);
const CLOSERS = new Set([0x5d, 0x7d]);
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * The byte length of each element of a JSON array the body holds (already parsed, so valid),
 * without the whitespace around it. Structural characters are ASCII, so the bytes are scanned
 * directly: outside strings, a comma at depth 1 ends an element.
 */
function elementSizes(body: Buffer): number[] {
  const sizes: number[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  let end = -1;
  const close = (): void => {
    if (start >= 0) sizes.push(end - start + 1);
    start = -1;
  };
  for (let i = 0; i < body.length; i++) {
    const byte = body[i] as number;
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
      end = i;
      continue;
    }
    if (depth === 1 && byte === COMMA) {
      close();
      continue;
    }
    if (CLOSERS.has(byte)) {
      depth--;
      if (depth === 0) {
        close();
        continue;
      }
    }
    if (WHITESPACE.has(byte)) continue;
    if (depth === 0) {
      // The array's own opening bracket.
      if (OPENERS.has(byte)) depth++;
      continue;
    }
    if (start < 0) start = i;
    end = i;
    if (byte === QUOTE) inString = true;
    else if (OPENERS.has(byte)) depth++;
  }
  return sizes;
}

function parsed(text: Buffer | string, prefix: string): JsonValue {
  try {
    return parseJsonBody(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw invalidJson(prefix, error.message);
  }
}

/** The single endpoint's `INVALID_JSON`, its message naming the line of an NDJSON body. */
function invalidJson(prefix: string, reason: string) {
  return requestError('notify', 'INVALID_JSON', `${prefix}: ${reason}`);
}

function kindOf(value: JsonValue): string {
  const kind = jsonKind(value);
  if (kind === 'null') return 'null';
  return kind === 'object' ? 'an object' : kind === 'array' ? 'an array' : `a ${kind}`;
}
