import { JsonNumber, type JsonObject, type JsonValue } from '../../json/json-value.js';
import { IdentifierError } from '../identifier-error.js';
import type { FloatRule } from '../identifier-rule.js';
import { canonicalFloatText, NumberParseError, parseRustF64 } from '../number-text.js';
import { parseOrderedConstraint, type OrderedDomain } from './constraint-object.js';
import type { ScalarFieldHandler } from './field-handler.js';
import { echo } from '../../text/echo.js';

/**
 * FloatHandler (docs/design/rules/schema-and-validation.md §5.6): finite doubles in Rust's literal syntax, printed
 * canonically so that `42.50` and `42.5` become the same topic token.
 */
export function createFloatHandler(field: string, rule: FloatRule): ScalarFieldHandler {
  const range = configuredRange(rule);
  const domain: OrderedDomain<number> = {
    readOperand: (operand, operator) => numericOperand(field, operand, operator),
    readToken: (token) => finiteOrUndefined(token),
    // Exact comparison, no tolerance (docs/design/rules/schema-and-validation.md §8.4); -0 and 0 are equal, as with Rust's `==`.
    compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
    format: canonicalFloatText,
    range,
    inExpectsArrayMessage: `Field '${field}' operator 'in' expects array of numbers`,
  };
  return {
    kind: 'scalar',
    canonicalize(text: string): string {
      const value = parseFloatText(field, text);
      if (!Number.isFinite(value)) throw new IdentifierError(`Field '${field}' must be a finite number, got: '${echo(text)}'`);
      if (range !== undefined && (value < range[0] || value > range[1])) {
        throw new IdentifierError(
          `Field '${field}' value ${canonicalFloatText(value)} is outside allowed range [${canonicalFloatText(range[0])}, ${canonicalFloatText(range[1])}]`,
        );
      }
      return canonicalFloatText(value);
    },
    parseConstraint: (constraint: JsonObject) => parseOrderedConstraint(field, constraint, domain),
  };
}

function configuredRange(rule: FloatRule): readonly [number, number] | undefined {
  const [min, max] = rule.range ?? [];
  return min === undefined || max === undefined ? undefined : [min, max];
}

function parseFloatText(field: string, text: string): number {
  try {
    return parseRustF64(text);
  } catch (error) {
    if (error instanceof NumberParseError) {
      throw new IdentifierError(`Field '${field}' must be a valid number, got: '${echo(text)}'`, error.message);
    }
    throw error;
  }
}

function finiteOrUndefined(token: string): number | undefined {
  try {
    const value = parseRustF64(token);
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function numericOperand(field: string, operand: JsonValue, operator: string): number {
  if (!(operand instanceof JsonNumber)) {
    throw new IdentifierError(`Field '${field}' operator '${echo(operator)}' expects numeric value`);
  }
  const value = operand.toNumber();
  if (!Number.isFinite(value)) {
    throw new IdentifierError(`Field '${field}' operator '${echo(operator)}' expects finite numeric value`);
  }
  return value;
}
