import { IdentifierError } from '../identifier-error.js';
import type { ScalarFieldHandler } from './field-handler.js';
import { echo } from '../../text/echo.js';

// Digits are ASCII only (D24): the reference's Unicode-aware `\d` let `١٢:٣٠` through to a
// failing integer parse and a 500; here it is simply not HH:MM.
const HOUR_ONLY = /^\d{1,2}$/;
const HOURS_AND_MINUTES = /^(\d{1,2}):(\d{2})$/;
const FOUR_DIGITS = /^(\d{2})(\d{2})$/;

/** TimeHandler (docs/design/rules/schema-and-validation.md §5.3): `H`, `HH`, `H:MM`, `HH:MM` or `HHMM` → `HHMM`. */
export function createTimeHandler(field: string): ScalarFieldHandler {
  const checked = (hours: number, minutes: number): string => {
    if (hours > 23) {
      throw new IdentifierError(`Field '${field}' has invalid hours: ${hours}. Hours must be 0-23 in 24-hour format`);
    }
    if (minutes > 59) {
      throw new IdentifierError(`Field '${field}' has invalid minutes: ${minutes}. Minutes must be 0-59`);
    }
    return String(hours).padStart(2, '0') + String(minutes).padStart(2, '0');
  };
  return {
    kind: 'scalar',
    canonicalize(text: string): string {
      // The reference measures lengths in UTF-8 bytes, so `١٢` (4 bytes) is an HHMM candidate.
      const bytes = Buffer.byteLength(text, 'utf8');
      if (HOUR_ONLY.test(text)) return checked(Number(text), 0);
      if (text.includes(':')) {
        const match = HOURS_AND_MINUTES.exec(text);
        if (!match) {
          throw new IdentifierError(
            `Field '${field}' has invalid HH:MM format '${echo(text)}'. Expected format: HH:MM (e.g., 14:30, 9:05)`,
          );
        }
        return checked(Number(match[1]), Number(match[2]));
      }
      if (bytes === 4) {
        const match = FOUR_DIGITS.exec(text);
        if (!match) {
          throw new IdentifierError(
            `Field '${field}' has invalid HHMM format '${echo(text)}'. Expected format: HHMM with exactly 4 digits (e.g., 1430, 0905)`,
          );
        }
        return checked(Number(match[1]), Number(match[2]));
      }
      throw new IdentifierError(`Field '${field}' has invalid time format '${echo(text)}'. Expected: H, HH, HH:MM, or HHMM`);
    },
  };
}
