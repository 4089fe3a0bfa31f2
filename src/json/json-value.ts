/**
 * JSON values as aviso-ts reads them from request bodies. Numbers keep their source text
 * (`JsonNumber`) because the protocol distinguishes `4` from `4.0` (an Int field accepts the first
 * only) and payload integers must survive beyond 2^53, delivered as they were sent.
 */
export class JsonNumber {
  constructor(readonly source: string) {}

  /** True when the literal has no fraction and no exponent (`42`, `-3`, and `-0`, which identifier text reads as a float). */
  get isIntegerLiteral(): boolean {
    return /^-?\d+$/.test(this.source);
  }

  toNumber(): number {
    return Number(this.source);
  }
}

export type JsonValue = string | boolean | null | JsonNumber | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof JsonNumber);
}

/** Name of a JSON value's kind, as used in validation diagnostics. */
export function jsonKind(value: JsonValue): 'string' | 'boolean' | 'null' | 'number' | 'array' | 'object' {
  if (value === null) return 'null';
  if (value instanceof JsonNumber) return 'number';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    default:
      return 'object';
  }
}
