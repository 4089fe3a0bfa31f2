import { describeNetworkError, describeResponse, type ShownError } from './http-error.js';
import { createParser } from './vendor/eventsource-parser.js';

/**
 * One watch or replay read with `fetch` (POST with the JSON body, so `Authorization` can be
 * sent) and its body parsed as SSE by `eventsource-parser` as bytes arrive.
 */

export interface StreamCallbacks {
  /** The server accepted the stream (200); `requestId` from `X-Request-ID`. */
  onOpen(requestId: string | null): void;
  onFrame(event: string, data: string): void;
  /** The server refused the stream (4xx/5xx), or could not be reached. */
  onRefused(error: ShownError): void;
  /** The body ended: `closed` by the server, `cancelled` by the operator, `dropped` otherwise. */
  onEnd(how: 'closed' | 'cancelled' | 'dropped', reason?: string): void;
}

export interface StreamRequest {
  readonly url: string;
  readonly body: unknown;
  readonly token: string;
}

export interface OpenStream {
  /** Stops reading and lets go of the connection. */
  cancel(): void;
}

export function openStream(request: StreamRequest, callbacks: StreamCallbacks): OpenStream {
  const controller = new AbortController();
  let cancelled = false;
  void read(request, callbacks, controller.signal, () => cancelled);
  return {
    cancel() {
      cancelled = true;
      controller.abort();
    },
  };
}

export function requestHeaders(token: string): Record<string, string> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (token.trim() !== '') headers.Authorization = `Bearer ${token.trim()}`;
  return headers;
}

async function read(request: StreamRequest, callbacks: StreamCallbacks, signal: AbortSignal, isCancelled: () => boolean): Promise<void> {
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: 'POST',
      headers: requestHeaders(request.token),
      body: JSON.stringify(request.body),
      signal,
    });
  } catch (error) {
    if (isCancelled()) callbacks.onEnd('cancelled');
    else callbacks.onRefused(describeNetworkError(error));
    return;
  }
  if (!response.ok || !response.body) {
    callbacks.onRefused(describeResponse(response, await response.text().catch(() => '')));
    return;
  }
  callbacks.onOpen(response.headers.get('X-Request-ID'));
  const parser = createParser({ onEvent: (message) => callbacks.onFrame(message.event ?? 'message', message.data) });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(value);
    }
    callbacks.onEnd('closed');
  } catch (error) {
    if (isCancelled()) callbacks.onEnd('cancelled');
    else callbacks.onEnd('dropped', error instanceof Error ? error.message : String(error));
  }
}
