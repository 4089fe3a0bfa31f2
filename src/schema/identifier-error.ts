/**
 * A client error in an identifier value. `message` is the top-level description and `details`
 * the innermost cause (docs/design/rules/api.md §9.1: they differ only for DateHandler and Int/Float parse errors).
 */
export class IdentifierError extends Error {
  readonly details: string;

  constructor(message: string, details?: string) {
    super(message);
    this.name = 'IdentifierError';
    this.details = details ?? message;
  }
}
