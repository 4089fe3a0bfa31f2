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
