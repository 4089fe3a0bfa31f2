/**
 * Label values of the Prometheus metrics (docs/design/rules/operations.md §3.3.4). Every label is drawn from a small,
 * fixed set so that no caller-controlled text can create new series: a series per raw path, method
 * or event type would let any client grow the registry without bound.
 */

/** `route` of a request no route matched. */
export const UNMATCHED_ROUTE = 'unmatched';

/** `event_type` of an unknown type accepted in non-strict mode. */
export const GENERIC_EVENT_TYPE = 'generic';

/** `event_type` of a notify whose body could not be parsed or whose type strict mode rejected. */
export const UNKNOWN_EVENT_TYPE = 'unknown';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'CONNECT', 'TRACE'] as const;

export type HttpMethodLabel = (typeof HTTP_METHODS)[number] | 'other';

const KNOWN_METHODS: ReadonlySet<string> = new Set(HTTP_METHODS);

/**
 * The route pattern with `{name}` placeholders, from fastify's `routeOptions.url`.
 *
 * fastify writes parameters as `:name`, optionally followed by a regular expression in
 * parentheses (`:id(^\\d+)`), and an escaped literal colon as `::`. A trailing `/*` wildcard is
 * dropped so a static-file route (`/static/*`) is labelled `/static` as docs/design/rules/operations.md §3.3.4 asks.
 */
export function routeLabel(pattern: string | undefined): string {
  if (pattern === undefined || pattern === '') return UNMATCHED_ROUTE;
  const withoutWildcard = pattern.length > 2 && pattern.endsWith('/*') ? pattern.slice(0, -2) : pattern;
  let out = '';
  let index = 0;
  while (index < withoutWildcard.length) {
    const char = withoutWildcard[index];
    if (char !== ':') {
      out += char;
      index++;
      continue;
    }
    if (withoutWildcard[index + 1] === ':') {
      out += ':';
      index += 2;
      continue;
    }
    const nameMatch = /^[A-Za-z0-9_$]+/.exec(withoutWildcard.slice(index + 1));
    if (!nameMatch) {
      out += char;
      index++;
      continue;
    }
    const name = nameMatch[0];
    out += `{${name}}`;
    index += 1 + name.length;
    if (withoutWildcard[index] === '(') index = skipRegex(withoutWildcard, index);
    // `:name?` marks an optional parameter; the placeholder already stands for it.
    if (withoutWildcard[index] === '?') index++;
  }
  return out;
}

/** Index just after the parenthesised regular expression starting at `open`, nesting respected. */
function skipRegex(pattern: string, open: number): number {
  let depth = 0;
  for (let index = open; index < pattern.length; index++) {
    const char = pattern[index];
    if (char === '\\') {
      index++;
    } else if (char === '(') {
      depth++;
    } else if (char === ')') {
      depth--;
      if (depth === 0) return index + 1;
    }
  }
  return pattern.length;
}

/** The request method if it is one of the nine standard ones (exact, as sent), else `other`. */
export function methodLabel(method: string | undefined): HttpMethodLabel {
  return method !== undefined && KNOWN_METHODS.has(method) ? (method as HttpMethodLabel) : 'other';
}

/**
 * The `event_type` of notification and SSE metrics: a configured schema name, `generic` for an
 * unknown type accepted in non-strict mode, `unknown` when the body gave no type (it could not be
 * parsed) or strict mode rejected it. The caller's text only passes through when it names a
 * configured schema, so the label set is bounded by the configuration.
 */
export function eventTypeLabel(configured: ReadonlySet<string>, eventType: string | undefined, strictRejected = false): string {
  if (strictRejected || eventType === undefined) return UNKNOWN_EVENT_TYPE;
  return configured.has(eventType) ? eventType : GENERIC_EVENT_TYPE;
}
