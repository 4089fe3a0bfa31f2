import { ConfigError } from './errors.js';

/**
 * Parses a base URL: http/https only, no query or fragment; the path always ends in `/` so that
 * relative joins keep a prefix (`https://gw/aviso` + `api/v1/x` → `https://gw/aviso/api/v1/x`).
 */
export function parseBaseUrl(input: string): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch (error) {
    throw new ConfigError(`base URL is not a valid URL: ${JSON.stringify(input)}`, { cause: error });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`base URL must use http or https, not ${url.protocol.replace(/:$/, '')}`);
  }
  if (url.username || url.password) throw new ConfigError('base URL must not embed credentials; use an auth provider');
  url.search = '';
  url.hash = '';
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

/** `path` relative to the base (no leading slash), keeping the base's path prefix. */
export function joinUrl(base: URL, path: string): URL {
  return new URL(path.replace(/^\/+/, ''), base);
}

/**
 * True for https, and for http to a loopback host, where a credential never leaves the machine:
 * `localhost` and `*.localhost`, 127.0.0.0/8 and `[::1]` (the aviso client's rule; an IPv4-mapped
 * address such as `[::ffff:127.0.0.1]` is not loopback by it, and so not by this one).
 */
export function isSecureOrLoopback(url: URL): boolean {
  if (url.protocol === 'https:') return true;
  const host = url.hostname.toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The URL without `user:password@`, for messages that name where a credential would have gone. */
export function urlWithoutUserinfo(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}
