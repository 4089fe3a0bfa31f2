import { JsonNumber, type JsonObject, type JsonValue } from '../../json/json-value.js';
import { IdentifierError } from '../identifier-error.js';
import type { IntRule } from '../identifier-rule.js';
import { NumberParseError, parseRustI64 } from '../number-text.js';
import { parseOrderedConstraint, type OrderedDomain } from './constraint-object.js';
import type { ScalarFieldHandler } from './field-handler.js';
import { echo } from '../../text/echo.js';

/**
 * IntHandler (docs/design/rules/schema-and-validation.md §5.5): signed 64-bit integers, kept as `bigint` end to end
 * so values beyond 2^53 neither lose digits nor compare wrongly.
 */
export function createIntHandler(field: string, rule: IntRule): ScalarFieldHandler {
  const range = configuredRange(rule);
  const domain: OrderedDomain<bigint> = {
    readOperand: (operand, operator) => integerOperand(field, operand, operator),
    readToken: (token) => parsedOrUndefined(token),
    compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
    format: (value) => value.toString(),
    range,
    inExpectsArrayMessage: `Field '${field}' operator 'in' expects array of integers`,
  };
  return {
    kind: 'scalar',
    canonicalize(text: string): string {
      const value = parseInteger(field, text);
      if (range !== undefined && (value < range[0] || value > range[1])) {
        throw new IdentifierError(`Field '${field}' value ${value} is outside allowed range [${range[0]}, ${range[1]}]`);
      }
      return value.toString();
    },
    parseConstraint: (constraint: JsonObject) => parseOrderedConstraint(field, constraint, domain),
  };
}

function configuredRange(rule: IntRule): readonly [bigint, bigint] | undefined {
  const [min, max] = rule.range ?? [];
  return min === undefined || max === undefined ? undefined : [BigInt(min), BigInt(max)];
}

function parseInteger(field: string, text: string): bigint {
  try {
    return parseRustI64(text);
  } catch (error) {
    if (error instanceof NumberParseError) {
      throw new IdentifierError(`Field '${field}' must be a valid integer, got: '${echo(text)}'`, error.message);
    }
    throw error;
  }
}

function parsedOrUndefined(token: string): bigint | undefined {
  try {
    return parseRustI64(token);
  } catch {
    return undefined;
  }
}

/**
 * An operand must be a JSON integer literal within i64. The reference's JSON library reads `4.0`,
 * `-0` and integers below i64::MIN as doubles and integers above i64::MAX as u64, so all of those
 * are refused, as are strings like `"4"`.
 */
function integerOperand(field: string, operand: JsonValue, operator: string): bigint {
  if (operand instanceof JsonNumber && operand.isIntegerLiteral && operand.source !== '-0') {
    const value = parsedOrUndefined(operand.source);
    if (value !== undefined) return value;
  }
  throw new IdentifierError(`Field '${field}' operator '${echo(operator)}' expects integer value`);
}
