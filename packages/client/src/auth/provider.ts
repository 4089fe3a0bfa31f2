/**
 * Auth providers (docs/design/rules/client.md §2): each yields the `Authorization` header value for a request, or
 * `undefined` to send none, and may refresh its credential after a 401.
 */
export interface AuthProvider {
  /** A short name for logs (never the secret). */
  readonly kind: string;
  /**
   * True when the credential was discovered (environment, a file) rather than given explicitly;
   * a discovered credential is never sent to a base URL that is neither https nor loopback.
   */
  readonly discovered: boolean;
  /** Where a discovered credential was found (`environment`, `credentials file PATH`), for messages. */
  readonly source?: string;
  /** The `Authorization` header value, or `undefined` for an anonymous request. */
  authorization(): Promise<string | undefined>;
  /** Re-read or rotate the credential after a 401. Resolves once the next `authorization()` sees it. */
  refresh(): Promise<void>;
}
