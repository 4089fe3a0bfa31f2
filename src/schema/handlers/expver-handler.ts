import { IdentifierError } from '../identifier-error.js';
import type { ExpverRule } from '../identifier-rule.js';
import { parseRustU32 } from '../number-text.js';
import type { ScalarFieldHandler } from './field-handler.js';

/**
 * ExpverHandler (docs/design/rules/schema-and-validation.md §5.7): experiment versions. Numbers (anything Rust reads
 * as u32) are zero-padded to four digits, other text is lower-cased; nothing is rejected but `""`
 * without a configured default.
 */
export function createExpverHandler(field: string, rule: ExpverRule): ScalarFieldHandler {
  return {
    kind: 'scalar',
    canonicalize(text: string): string {
      if (text.length > 0) return canonicalExpver(text);
      if (rule.default === undefined) throw new IdentifierError(`Field '${field}' cannot be empty`);
      // The default goes through the same canonicalisation once; an empty default stays empty.
      return canonicalExpver(rule.default);
    },
  };
}

function canonicalExpver(text: string): string {
  let number: number;
  try {
    number = parseRustU32(text);
  } catch {
    return text.toLowerCase();
  }
  return String(number).padStart(4, '0');
}
