/**
 * Connection-specific headers, which HTTP/2 forbids (RFC 9113 §8.2.2). Node's compatibility API
 * drops them from an HTTP/2 response with an `UnsupportedWarning` on stderr, so they are left out
 * before: fastify adds `Connection: close` to a refused upload, streams send `Connection: keep-alive`.
 */
export const HTTP1_ONLY_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

export function withoutHttp1OnlyHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HTTP1_ONLY_HEADERS.has(name.toLowerCase())));
}
