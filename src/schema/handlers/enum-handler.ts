import type { JsonObject, JsonValue } from '../../json/json-value.js';
import { IdentifierError } from '../identifier-error.js';
import type { EnumRule } from '../identifier-rule.js';
import { singleOperator } from './constraint-object.js';
import type { Constraint, ScalarFieldHandler } from './field-handler.js';
import { echo } from '../../text/echo.js';

/**
 * EnumHandler (docs/design/rules/schema-and-validation.md §5.4): one of the configured values, compared after full
 * Unicode lower-casing; the lower-cased input is canonical.
 */
export function createEnumHandler(field: string, rule: EnumRule): ScalarFieldHandler {
  const allowed = rule.values.map((value) => value.toLowerCase());
  const allowedSet = new Set(allowed);
  return {
    kind: 'scalar',
    canonicalize(text: string): string {
      const lower = text.toLowerCase();
      if (!allowedSet.has(lower)) {
        throw new IdentifierError(`Field '${field}' has invalid value '${echo(text)}'. Allowed: [${rule.values.join(', ')}]`);
      }
      return lower;
    },
    parseConstraint(constraint: JsonObject): Constraint {
      const [operator, operand] = singleOperator(field, constraint);
      const readMember = (member: JsonValue): string => {
        if (typeof member !== 'string') {
          throw new IdentifierError(`Field '${field}' operator '${echo(operator)}' expects string value`);
        }
        const lower = member.toLowerCase();
        if (!allowedSet.has(lower)) {
          throw new IdentifierError(`Field '${field}' has invalid enum value '${echo(lower)}'. Allowed: [${allowed.join(', ')}]`);
        }
        return lower;
      };
      let accepted: ReadonlySet<string>;
      switch (operator) {
        case 'eq':
          accepted = new Set([readMember(operand)]);
          break;
        case 'in':
          if (!Array.isArray(operand)) throw new IdentifierError(`Field '${field}' operator 'in' expects array of strings`);
          if (operand.length === 0) {
            throw new IdentifierError(`Field '${field}' operator 'in' must contain at least one value`);
          }
          accepted = new Set(operand.map(readMember));
          break;
        default:
          throw new IdentifierError(`Field '${field}' has invalid operator '${echo(operator)}'. Allowed for enum constraints: eq,in`);
      }
      return {
        operator,
        // Empty and `*` tokens mean "not set" (docs/design/rules/schema-and-validation.md §8.3) even if a configured value happened to be `*`.
        matches: (token: string) => token !== '' && token !== '*' && accepted.has(token.toLowerCase()),
      };
    },
  };
}
