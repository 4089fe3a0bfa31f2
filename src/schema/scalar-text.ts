import { JsonNumber, type JsonValue } from '../json/json-value.js';
import { IdentifierError } from './identifier-error.js';
import { referenceFloatText } from './number-text.js';
import { echo } from '../text/echo.js';

const I64_MIN = -(2n ** 63n);
const U64_MAX = 2n ** 64n - 1n;
const INTEGER_LITERAL = /^-?\d+$/;

/**
 * The text a handler sees for a scalar identifier value (docs/design/rules/schema-and-validation.md §4). Numbers go
 * by their source literal because the protocol tells `4` (→ `"4"`) from `4.0` (→ `"4.0"`).
 * Objects are constraint objects and never reach this function.
 */
export function scalarText(field: string, value: JsonValue): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value === null) throw new IdentifierError(`Field '${echo(field)}' cannot be null`);
  if (value instanceof JsonNumber) return numberText(value);
  if (Array.isArray(value)) {
    throw new IdentifierError(`Field '${echo(field)}' must be a scalar value or constraint object, got array`);
  }
  throw new Error(`scalarText called with a constraint object for field '${field}'`);
}

/**
 * The reference's JSON library keeps integer literals that fit i64 or u64 as integers and reads
 * everything else as a double; it reads `-0` as the double -0.0.
 */
function numberText(value: JsonNumber): string {
  const source = value.source;
  if (INTEGER_LITERAL.test(source) && source !== '-0') {
    const integer = BigInt(source);
    if (integer >= I64_MIN && integer <= U64_MAX) return integer.toString();
  }
  return referenceFloatText(Number(source));
}
