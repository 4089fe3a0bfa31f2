import { formatCalendarDate, parseLenientDate } from '../../time/date-text.js';
import { IdentifierError } from '../identifier-error.js';
import type { DateRule } from '../identifier-rule.js';
import type { ScalarFieldHandler } from './field-handler.js';
import { echo } from '../../text/echo.js';

/**
 * DateHandler (docs/design/rules/schema-and-validation.md §5.2). Parsing reproduces the reference's date library
 * (chrono) on its three formats, leniency included (src/time/date-text.ts).
 */
export function createDateHandler(field: string, rule: DateRule): ScalarFieldHandler {
  const separator = rule.canonical_format === '%Y-%m-%d' ? '-' : '';
  return {
    kind: 'scalar',
    canonicalize(text: string): string {
      const date = parseLenientDate(text);
      if (date === undefined) {
        throw new IdentifierError(
          `Failed to parse date value for field '${field}'`,
          `Field '${field}' contains invalid date '${echo(text)}'. Expected: YYYY-MM-DD, YYYYMMDD, or YYYY-DDD`,
        );
      }
      return formatCalendarDate(date, separator);
    },
  };
}
