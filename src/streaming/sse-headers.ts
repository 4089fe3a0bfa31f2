/**
 * Headers of a successful stream, as the reference sends them. A transport with CORS configured
 * replaces the reference's `Access-Control-Allow-Origin: *` with its policy's (`HttpStreamSink`).
 */
export function sseHeaders(requestId: string): Record<string, string> {
  return {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'access-control-allow-origin': '*',
    'x-accel-buffering': 'no',
    'x-request-id': requestId,
  };
}
