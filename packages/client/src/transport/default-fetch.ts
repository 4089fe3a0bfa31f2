import type { SharedConnections } from './shared-connections.js';

export interface DefaultFetch {
  readonly fetch: typeof globalThis.fetch;
  /** Destroys the shared connections (Node); nothing to do elsewhere. */
  close(): Promise<void>;
}

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

/**
 * The client's fetch when none is given. In Node: undici's fetch over `SharedConnections`
 * (HTTP/2 for https origins, at most 64 watches per connection), imported on first use so a
 * browser never loads undici. Elsewhere: the platform fetch, whose connection pool the browser
 * owns (it multiplexes h2 itself).
 */
export interface TlsTrust {
  /** PEM certificates trusted in addition to Node's default roots. */
  readonly ca?: string | readonly string[];
  /** Accept any server certificate (development against a self-signed server only). */
  readonly dangerAcceptInvalidCerts?: boolean;
}

/**
 * The TLS options of every connection. Extra CAs are added to Node's default roots rather than
 * replacing them (Node's `ca` option replaces), so a private CA does not cut off public servers.
 */
export async function connectOptions(trust: TlsTrust): Promise<{ ca?: string[]; rejectUnauthorized?: boolean }> {
  const extra = trust.ca === undefined ? [] : typeof trust.ca === 'string' ? [trust.ca] : [...trust.ca];
  const options: { ca?: string[]; rejectUnauthorized?: boolean } = {};
  if (extra.length > 0) options.ca = [...(await import('node:tls')).rootCertificates, ...extra];
  if (trust.dangerAcceptInvalidCerts === true) options.rejectUnauthorized = false;
  return options;
}

export function defaultFetch(options: TlsTrust = {}): DefaultFetch {
  if (!isNode) return { fetch: globalThis.fetch.bind(globalThis), close: () => Promise.resolve() };
  let loaded: Promise<{ fetch: (input: URL | string, init: object) => Promise<unknown>; dispatcher: SharedConnections }> | undefined;
  const load = (): NonNullable<typeof loaded> =>
    (loaded ??= Promise.all([import('undici'), import('./shared-connections.js'), connectOptions(options)]).then(
      ([undici, shared, tls]) => ({
        fetch: undici.fetch,
        dispatcher: new shared.SharedConnections(tls),
      }),
    ));
  return {
    fetch: (async (input: URL | string, init?: RequestInit) => {
      const { fetch, dispatcher } = await load();
      // Only streams are multiplexed: undici 6.29's h2 client fails an assertion
      // (`!this.completed` in onConnect) when a short exchange completes on a connection whose
      // earlier streams are still open, so notify, schema and admin take HTTP/1.1 keep-alive.
      const streaming = (init?.headers as Record<string, string> | undefined)?.accept === 'text/event-stream';
      return fetch(input, { ...init, dispatcher: streaming ? dispatcher : dispatcher.plain });
    }) as typeof globalThis.fetch,
    close: async () => {
      if (loaded !== undefined) await (await loaded).dispatcher.destroy();
    },
  };
}
