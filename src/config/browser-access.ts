import type { CorsConfig, TlsConfig } from './model.js';
import { parseWebUrl } from './homepage-links.js';

/** The list entry that lets any origin read without credentials (docs/configuration.md, CORS). */
export const ANY_ORIGIN = '*';

/**
 * The startup check of `application.cors.allowed_origins` (docs/design/rules/browser.md §2). A browser sends its
 * `Origin` header as `scheme://host[:port]`, lower-case, with no path and the default port
 * left out, and the server compares it as text: an entry written any other way (a trailing
 * slash, a path, upper case, `:443` on https) could never match, so it is refused with the form
 * it should have rather than silently ignored.
 *
 * Returns the message for the first bad entry, or undefined when all are good.
 */
export function corsOriginProblem(cors: CorsConfig): string | undefined {
  return originListProblem('application.cors.allowed_origins', cors.allowed_origins, true);
}

/**
 * The startup check of `application.additional_origins` (D46): the further origins at which
 * browsers reach this server itself, written as browsers send them, as the CORS list is; `"*"`
 * has no meaning there (an own origin is one name, never "any").
 */
export function additionalOriginsProblem(additionalOrigins: readonly string[]): string | undefined {
  return originListProblem('application.additional_origins', additionalOrigins, false);
}

function originListProblem(setting: string, origins: readonly string[], anyAllowed: boolean): string | undefined {
  for (const [index, origin] of origins.entries()) {
    if (anyAllowed && origin === ANY_ORIGIN) continue;
    const canonical = canonicalOrigin(origin);
    if (canonical === origin) continue;
    const field = `${setting}[${index}]`;
    const form = `write scheme://host[:port] with http or https and no path${anyAllowed ? ', or "*"' : ''}`;
    return canonical === undefined
      ? `${field}: ${JSON.stringify(origin)} is not an origin: ${form}`
      : `${field}: ${JSON.stringify(origin)} is not an origin as browsers send it: write ${JSON.stringify(canonical)}`;
  }
  return undefined;
}

/** The origin a browser would send for this text, or undefined when it names none. */
function canonicalOrigin(text: string): string | undefined {
  const url = parseWebUrl(text);
  if (url === undefined || url.search !== '' || url.hash !== '') return undefined;
  if (url.pathname !== '/' || /^[a-z]+:\/\/[^/]*\/[^/]/i.test(text)) return undefined;
  return url.origin;
}

/** `application.tls`: both files must be named; whether they can be read is checked when they are read. */
export function tlsSettingProblem(tls: TlsConfig | undefined): string | undefined {
  if (tls === undefined) return undefined;
  if (tls.cert_file.trim() === '') return 'application.tls.cert_file: must not be blank';
  if (tls.key_file.trim() === '') return 'application.tls.key_file: must not be blank';
  if (tls.ca_file !== undefined && tls.ca_file.trim() === '') return 'application.tls.ca_file: must not be blank when set';
  return undefined;
}
