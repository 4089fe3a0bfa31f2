/**
 * The status class of a refusal: no or bad credentials, not allowed, the server cannot decide (a
 * misconfiguration or an unexpected failure), the service that decides cannot be reached.
 */
export type AuthErrorStatus = 401 | 403 | 500 | 503;

/**
 * What authentication and authorization raise when they refuse a request; `http/` turns it into
 * the shape-C body, its status and its `WWW-Authenticate` headers, as it does for schema errors.
 */
export class AuthError extends Error {
  constructor(
    readonly status: AuthErrorStatus,
    message: string,
    /** The `WWW-Authenticate` challenges of a 401, one per realm the caller may answer. */
    readonly challenges: readonly string[] = [],
    /** Facts for the log line of this refusal that are not part of the response. */
    readonly logContext: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'AuthError';
  }
}
