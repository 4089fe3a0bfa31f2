import { IdentifierError } from '../identifier-error.js';
import type { StringRule } from '../identifier-rule.js';
import type { ScalarFieldHandler } from './field-handler.js';

/** StringHandler (docs/design/rules/schema-and-validation.md §5.1): any non-empty text, kept exactly as sent. */
export function createStringHandler(field: string, rule: StringRule): ScalarFieldHandler {
  const maxLength = rule.max_length;
  return {
    kind: 'scalar',
    canonicalize(text: string): string {
      if (text.length === 0) throw new IdentifierError(`Field '${field}' cannot be empty`);
      // The message says "characters" but the reference counts UTF-8 bytes (S18).
      const bytes = Buffer.byteLength(text, 'utf8');
      if (maxLength !== undefined && bytes > maxLength) {
        throw new IdentifierError(`Field '${field}' exceeds maximum length of ${maxLength} characters, got: ${bytes}`);
      }
      return text;
    },
  };
}
