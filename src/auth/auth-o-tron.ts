import { isJwtShaped } from './authorization-header.js';

/** How auth-o-tron answered one credential check (docs/design/rules/operations.md §2.3.3). */
export type AuthOTronAnswer =
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'rejected' }
  | { readonly kind: 'denied' }
  /** The service is down, timed out, answered an unexpected status, or gave no usable token. */
  | { readonly kind: 'unavailable'; readonly reason: string };

/**
 * Direct mode's one outbound call: `GET <url>/authenticate` with the caller's `Authorization`
 * header and nothing else, bounded by `auth.timeout_ms` including the body. No retries, no cache.
 */
export class AuthOTronClient {
  private readonly endpoint: string;

  constructor(
    baseUrl: string,
    private readonly timeoutMs: number,
  ) {
    this.endpoint = `${baseUrl.replace(/\/+$/, '')}/authenticate`;
  }

  async authenticate(authorization: string): Promise<AuthOTronAnswer> {
    let status: number;
    let headerToken: string | undefined;
    let body: string;
    try {
      const response = await fetch(this.endpoint, {
        method: 'GET',
        headers: { authorization },
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'manual',
      });
      status = response.status;
      headerToken = bearerToken(response.headers.get('authorization'));
      body = await response.text();
    } catch (error) {
      return { kind: 'unavailable', reason: stripUserInfo(error instanceof Error ? error.message : String(error)) };
    }
    if (status === 401) return { kind: 'rejected' };
    if (status === 403) return { kind: 'denied' };
    if (status < 200 || status > 299) return { kind: 'unavailable', reason: `auth-o-tron answered ${status}` };
    const token = headerToken ?? tokenFromBody(body);
    return token ? { kind: 'token', token } : { kind: 'unavailable', reason: 'auth-o-tron answered without a token' };
  }
}

/** `Bearer <jwt>` in the response's `Authorization` header, exactly two parts. */
function bearerToken(header: string | null): string | undefined {
  if (header === null) return undefined;
  const parts = header.trim().split(/\s+/);
  if (parts.length !== 2 || parts[0]?.toLowerCase() !== 'bearer') return undefined;
  const token = parts[1] as string;
  return isJwtShaped(token) ? token : undefined;
}

/** A JSON object's `token`/`jwt`/`access_token` (first present wins), a JSON string, or the raw body. */
function tokenFromBody(raw: string): string | undefined {
  const body = raw.trim();
  if (body === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return isJwtShaped(body) ? body : undefined;
  }
  if (typeof parsed === 'string') return shaped(parsed.trim());
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    const record = parsed as Record<string, unknown>;
    for (const field of ['token', 'jwt', 'access_token']) {
      const value = record[field];
      if (value === undefined || value === null) continue;
      // A present but malformed field does not fall through to the next one.
      return typeof value === 'string' ? shaped(value.trim()) : undefined;
    }
    return undefined;
  }
  return isJwtShaped(body) ? body : undefined;
}

function shaped(token: string): string | undefined {
  return isJwtShaped(token) ? token : undefined;
}

/** Error texts may quote URLs; credentials in them must not reach the logs (docs/design/rules/operations.md §3.4.1). */
export function stripUserInfo(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1[REDACTED]@');
}
