import { parse } from 'lossless-json';
import { JsonNumber, type JsonValue } from './json-value.js';
import { echo } from '../text/echo.js';

/** serde_json's recursion limit; deeper documents are rejected like the reference does. */
const MAX_JSON_DEPTH = 128;

export class JsonSyntaxError extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Parses a request body into a `JsonValue`, keeping number source text. Rejects invalid UTF-8,
 * nesting deeper than MAX_JSON_DEPTH and numbers outside the double range (as serde_json does),
 * so later stages never see a value the reference would have refused to parse.
 */
export function parseJsonBody(body: Buffer | string): JsonValue {
  let text: string;
  if (typeof body === 'string') {
    text = body;
  } else {
    try {
      text = utf8.decode(body);
    } catch {
      throw new JsonSyntaxError('request body is not valid UTF-8');
    }
  }
  checkDepth(text);
  try {
    return parse(text, null, parseNumber) as JsonValue;
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw error;
    throw new JsonSyntaxError(error instanceof Error ? error.message : String(error));
  }
}

function parseNumber(source: string): JsonNumber {
  if (!Number.isFinite(Number(source))) {
    throw new JsonSyntaxError(`number out of range: ${echo(source)}`);
  }
  return new JsonNumber(source);
}

/** Counts bracket nesting outside strings without building anything, so deep input cannot blow the stack. */
function checkDepth(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > MAX_JSON_DEPTH) {
        throw new JsonSyntaxError(`recursion limit exceeded at position ${i}`);
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
}
