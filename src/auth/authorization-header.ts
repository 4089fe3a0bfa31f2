/** What the `Authorization` header of a request amounts to (docs/design/rules/operations.md §2.3.1, §2.4). */
export type PresentedCredentials =
  | { readonly kind: 'none' }
  /** Unusable; a 401 with this message on admin paths, anonymous elsewhere. */
  | { readonly kind: 'malformed'; readonly message: string }
  /** `header` is the trimmed value, forwarded unchanged in direct mode; `token` is the bearer token. */
  | { readonly kind: 'present'; readonly header: string; readonly token: string };

const VISIBLE_ASCII = /^[\t\x20-\x7e]*$/;

/** Direct mode: `Bearer` or `Basic` (any case), credentials after the first space. */
export function parseDirectHeader(raw: string | undefined): PresentedCredentials {
  if (raw === undefined) return { kind: 'none' };
  if (!VISIBLE_ASCII.test(raw)) return { kind: 'malformed', message: 'Authorization header is not valid UTF-8' };
  const header = raw.trim();
  if (header === '') return { kind: 'malformed', message: 'Authorization header cannot be empty' };
  const space = header.indexOf(' ');
  const scheme = space < 0 ? header : header.slice(0, space);
  if (space < 0 || !/^(bearer|basic)$/i.test(scheme)) {
    return { kind: 'malformed', message: 'Authorization header must use Bearer or Basic scheme' };
  }
  const credentials = header.slice(space + 1).trim();
  if (credentials === '') return { kind: 'malformed', message: 'Authorization header credentials cannot be empty' };
  return { kind: 'present', header, token: credentials };
}

/** Trusted-proxy mode: exactly `Bearer <token>` (any case), split on whitespace. */
export function parseTrustedProxyHeader(raw: string | undefined): PresentedCredentials {
  if (raw === undefined) return { kind: 'none' };
  const header = raw.trim();
  const parts = header.split(/\s+/);
  if (parts.length !== 2 || parts[0]?.toLowerCase() !== 'bearer') {
    return { kind: 'malformed', message: 'Authorization header must use Bearer token' };
  }
  const token = parts[1] as string;
  if (token === '') return { kind: 'malformed', message: 'Authorization header cannot contain an empty token' };
  return { kind: 'present', header, token };
}

/** Three non-empty base64url segments: a structural check only (docs/design/rules/operations.md §2.3.3). */
export function isJwtShaped(text: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(text);
}
