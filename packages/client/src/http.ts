import type { AuthProvider } from './auth/provider.js';
import { AuthError, describeNetworkFailure, HttpError, TransportError } from './errors.js';
import { isSecureOrLoopback, joinUrl, urlWithoutUserinfo } from './url.js';

export interface TransportOptions {
  readonly baseUrl: URL;
  readonly auth: AuthProvider | undefined;
  readonly userAgent: string | undefined;
  readonly fetch: typeof globalThis.fetch;
}

/** The aviso client's refusal of a discovered credential for a remote `http://` address (it names where the credential came from). */
export function plaintextRefusal(auth: AuthProvider, baseUrl: URL): AuthError {
  return new AuthError(
    `refusing to send the credential from the ${auth.source ?? auth.kind} to ${urlWithoutUserinfo(baseUrl)}, which is not https and not a loopback address. ` +
      'Use an https address, or pass the credential explicitly if you intend to send it in the clear.',
  );
}

/**
 * The HTTP seam shared by requests and watches: builds headers, refuses a discovered credential
 * for an insecure remote base URL, and coalesces refreshes after a 401 so concurrent requests
 * trigger one refresh between them.
 */
export class Transport {
  private refreshing: Promise<void> | undefined;
  constructor(readonly options: TransportOptions) {}

  url(path: string): URL {
    return joinUrl(this.options.baseUrl, path);
  }

  async headers(extra: Record<string, string>): Promise<Record<string, string>> {
    const headers: Record<string, string> = { ...extra };
    if (this.options.userAgent) headers['user-agent'] = this.options.userAgent;
    const auth = this.options.auth;
    if (auth) {
      const value = await auth.authorization();
      if (value !== undefined) {
        if (auth.discovered && !isSecureOrLoopback(this.options.baseUrl)) throw plaintextRefusal(auth, this.options.baseUrl);
        headers.authorization = value;
      }
    }
    return headers;
  }

  /** One refresh at a time; callers arriving while it runs share its outcome. */
  refresh(): Promise<void> {
    const auth = this.options.auth;
    if (!auth) return Promise.resolve();
    this.refreshing ??= auth.refresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /**
   * One request/response exchange. Never retried once the body was sent, except exactly once
   * after a 401 and a refresh (the server refused it before acting on it).
   */
  async exchange(
    method: string,
    path: string,
    body: unknown,
    timeoutMs: number,
    signal?: AbortSignal,
    extraHeaders: Readonly<Record<string, string>> = {},
  ): Promise<{ response: Response; text: string }> {
    const hasAuth = this.options.auth !== undefined;
    for (let attempt = 0; ; attempt++) {
      const response = await this.send(method, path, body, timeoutMs, signal, extraHeaders);
      const text = await response.text().catch((error: unknown) => {
        throw new TransportError(`reading the response of ${method} ${path} failed: ${(error as Error).message}`, { cause: error });
      });
      if (response.status === 401) {
        if (hasAuth && attempt === 0) {
          await this.refresh();
          continue;
        }
        throw new AuthError(
          hasAuth ? 'the server refused the credential (401) after a refresh' : 'the server requires authentication (401)',
          401,
          {
            cause: new HttpError(401, text, response.headers.get('x-request-id') ?? undefined),
          },
        );
      }
      return { response, text };
    }
  }

  private async send(
    method: string,
    path: string,
    body: unknown,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    extraHeaders: Readonly<Record<string, string>>,
  ): Promise<Response> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const headers = await this.headers(
      body === undefined
        ? { ...extraHeaders, accept: 'application/json' }
        : { ...extraHeaders, accept: 'application/json', 'content-type': 'application/json' },
    );
    try {
      return await this.options.fetch(this.url(path), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: combined,
        redirect: 'manual',
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const why = timeout.aborted ? `timed out after ${timeoutMs} ms` : describeNetworkFailure(error);
      throw new TransportError(`${method} ${this.url(path).href} failed: ${why}`, { cause: error });
    }
  }
}
