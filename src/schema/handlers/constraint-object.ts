import type { JsonObject, JsonValue } from '../../json/json-value.js';
import { IdentifierError } from '../identifier-error.js';
import type { Constraint } from './field-handler.js';
import { echo } from '../../text/echo.js';

/**
 * Plumbing shared by the handlers with constraint operators (docs/design/rules/schema-and-validation.md §8.4):
 * the one-operator rule and the seven operators of ordered values (IntHandler, FloatHandler).
 */

/** The single `[operator, operand]` entry of a constraint object. */
export function singleOperator(field: string, constraint: JsonObject): [string, JsonValue] {
  const entries = Object.entries(constraint);
  const [entry] = entries;
  if (entries.length !== 1 || entry === undefined) {
    throw new IdentifierError(`Field '${field}' constraint must contain exactly one operator`);
  }
  return entry;
}

/** How one ordered value type (i64 or finite f64) reads, compares and prints its values. */
export interface OrderedDomain<T> {
  /** Reads one operand of `operator`, throwing the handler's "expects … value" error. */
  readOperand(operand: JsonValue, operator: string): T;
  /** Reads a candidate's canonical token; `undefined` when it does not parse (docs/design/rules/schema-and-validation.md §8.3). */
  readToken(token: string): T | undefined;
  compare: (a: T, b: T) => number;
  /** Canonical text of a value, as printed in range messages. */
  format(value: T): string;
  /** Inclusive `[min, max]` from the field's configuration, if any. */
  readonly range: readonly [T, T] | undefined;
  /** The message when `in` is given something other than an array. */
  readonly inExpectsArrayMessage: string;
}

const ORDERED_OPERATORS = 'eq,in,gt,gte,lt,lte,between';

/** Parses `{op: operand}` for IntHandler/FloatHandler and returns its predicate. */
export function parseOrderedConstraint<T>(field: string, constraint: JsonObject, domain: OrderedDomain<T>): Constraint {
  const [operator, operand] = singleOperator(field, constraint);
  const holds = orderedPredicate(field, operator, operand, domain);
  return {
    operator,
    matches(canonicalToken: string): boolean {
      const value = domain.readToken(canonicalToken);
      return value !== undefined && holds(value);
    },
  };
}

function orderedPredicate<T>(field: string, operator: string, operand: JsonValue, domain: OrderedDomain<T>): (x: T) => boolean {
  const { compare } = domain;
  switch (operator) {
    case 'eq':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const v = checkedInRange(field, domain, domain.readOperand(operand, operator));
      return comparison(operator, (x: T) => compare(x, v));
    }
    case 'in': {
      if (!Array.isArray(operand)) throw new IdentifierError(domain.inExpectsArrayMessage);
      if (operand.length === 0) {
        throw new IdentifierError(`Field '${field}' operator 'in' must contain at least one value`);
      }
      const values = operand.map((item) => domain.readOperand(item, operator));
      for (const value of values) checkedInRange(field, domain, value);
      return (x: T) => values.some((v) => compare(x, v) === 0);
    }
    case 'between': {
      if (!Array.isArray(operand)) throw new IdentifierError(`Field '${field}' operator 'between' expects [min,max]`);
      const [low, high] = operand;
      if (operand.length !== 2 || low === undefined || high === undefined) {
        throw new IdentifierError(`Field '${field}' operator 'between' expects exactly two values [min,max]`);
      }
      const min = domain.readOperand(low, operator);
      const max = domain.readOperand(high, operator);
      if (compare(min, max) > 0) throw new IdentifierError(`Field '${field}' operator 'between' expects min <= max`);
      checkedInRange(field, domain, min);
      checkedInRange(field, domain, max);
      return (x: T) => compare(x, min) >= 0 && compare(x, max) <= 0;
    }
    default:
      throw new IdentifierError(`Field '${field}' has invalid operator '${echo(operator)}'. Allowed: ${ORDERED_OPERATORS}`);
  }
}

function comparison<T>(operator: 'eq' | 'gt' | 'gte' | 'lt' | 'lte', against: (x: T) => number): (x: T) => boolean {
  switch (operator) {
    case 'eq':
      return (x) => against(x) === 0;
    case 'gt':
      return (x) => against(x) > 0;
    case 'gte':
      return (x) => against(x) >= 0;
    case 'lt':
      return (x) => against(x) < 0;
    case 'lte':
      return (x) => against(x) <= 0;
  }
}

function checkedInRange<T>(field: string, domain: OrderedDomain<T>, value: T): T {
  const range = domain.range;
  if (range !== undefined && (domain.compare(value, range[0]) < 0 || domain.compare(value, range[1]) > 0)) {
    throw new IdentifierError(
      `Field '${field}' constraint value ${domain.format(value)} is outside allowed range [${domain.format(range[0])}, ${domain.format(range[1])}]`,
    );
  }
  return value;
}
