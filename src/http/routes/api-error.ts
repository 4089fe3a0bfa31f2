/**
 * The one error type that routes and validation throw; the central error handler renders it
 * (docs/design/architecture.md "Errors"). `body` holds the exact JSON shape of docs/design/rules/api.md §9.1 minus `request_id`,
 * which the handler adds.
 */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: Readonly<Record<string, unknown>>,
    readonly headers: Readonly<Record<string, string | string[]>> = {},
    /** Facts for the log line of this rejection that are not part of the response. */
    readonly logContext: Readonly<Record<string, unknown>> = {},
  ) {
    super(typeof body.message === 'string' ? body.message : `HTTP ${statusCode}`);
    this.name = 'ApiError';
  }
}
