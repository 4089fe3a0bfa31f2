import { request as httpRequest } from 'node:http';

/** Small fetch helpers for end-to-end tests. */
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface JsonResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: Record<string, unknown>;
}

export async function request(
  url: string,
  init: { method?: string; body?: string | Uint8Array; headers?: Record<string, string> } = {},
): Promise<JsonResponse> {
  const response = await fetch(url, { method: init.method ?? 'GET', body: init.body, headers: init.headers });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON; tests that care look at `text`
  }
  return { status: response.status, headers: response.headers, text, json };
}

export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return request(url, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers });
}

/**
 * Sends a request on a TCP connection of its own (no keep-alive pool). With several workers
 * (D36) Node's cluster hands each new connection to the next worker in turn, so consecutive calls
 * reach different workers, which a pooled `fetch` would not.
 */
export function requestOnNewConnection(
  url: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<JsonResponse> {
  const target = new URL(url);
  const body = init.body ?? '';
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        agent: false,
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: init.method ?? 'GET',
        headers: {
          ...(body === '' ? {} : { 'content-type': 'application/json' }),
          'content-length': Buffer.byteLength(body),
          ...init.headers,
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('error', reject);
        response.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            for (const each of Array.isArray(value) ? value : [value]) if (each !== undefined) headers.append(name, each);
          }
          let json: Record<string, unknown> = {};
          try {
            json = JSON.parse(text) as Record<string, unknown>;
          } catch {
            // not JSON; tests that care look at `text`
          }
          resolve({ status: response.statusCode ?? 0, headers, text, json });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

export function postJsonOnNewConnection(url: string, body: unknown): Promise<JsonResponse> {
  return requestOnNewConnection(url, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
}
