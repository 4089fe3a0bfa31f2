import { parseWebUrl } from './homepage-links.js';

/**
 * The origins at which browsers reach this server itself (D46): a page there is the server's own
 * (the console), and its state-changing requests are served like a client's. They come from the
 * configuration alone, never from the request's `Host`: a page whose name was re-pointed at the
 * server's address (DNS rebinding) reaches it with its own name in `Host`, and would otherwise be
 * "same-origin" with it.
 */
export interface OwnOriginSettings {
  /** `application.base_url`: its origin is the server's public one. */
  readonly baseUrl: string;
  /** `application.additional_origins`, already checked as origins (config/browser-access.ts). */
  readonly additionalOrigins: readonly string[];
  /** `application.tls` is set: the listening port speaks `https`. */
  readonly tls: boolean;
}

/** The names a browser gives the loopback interface. */
const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/**
 * The set of `Origin` values that are the server's own, compared as text (as the CORS list is):
 * `base_url`'s origin and `additional_origins`. When `base_url` names a loopback host, every
 * loopback name at `base_url`'s port and at `listeningPort` (when known) is its own too: a
 * developer's server is opened as `localhost` or `127.0.0.1` alike, on the port it listens on,
 * whatever `base_url` says. A rebinding page cannot borrow these names: its origin keeps the name
 * the page was loaded from, and a loopback name never resolves to another machine, so a page there
 * is served by this machine itself.
 */
export function ownOrigins(settings: OwnOriginSettings, listeningPort: number | undefined): ReadonlySet<string> {
  const origins = new Set(settings.additionalOrigins);
  const base = parseWebUrl(settings.baseUrl);
  if (base === undefined) return origins;
  origins.add(base.origin);
  if (!LOOPBACK_HOSTS.includes(base.hostname)) return origins;
  for (const host of LOOPBACK_HOSTS) {
    origins.add(originOf(base.protocol, host, base.port));
    if (listeningPort !== undefined) origins.add(originOf(settings.tls ? 'https:' : 'http:', host, String(listeningPort)));
  }
  return origins;
}

/** The origin as a browser sends it: the default port left out. */
function originOf(protocol: string, host: string, port: string): string {
  return new URL(`${protocol}//${host}${port === '' ? '' : `:${port}`}`).origin;
}
