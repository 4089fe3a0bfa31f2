import { readFileSync } from 'node:fs';
import type { SecureServerOptions } from 'node:http2';
import { createSecureContext, type Server as TlsServer } from 'node:tls';
import type { TlsConfig } from '../../config/model.js';
import type { ServerLimits } from './server-limits.js';

/**
 * HTTP/2 streams one client may keep open on one connection (docs/design/rules/browser.md §3: at least 128; the
 * aviso client multiplexes up to 64 watches, a console opens many). Bounded rather than Node's
 * unlimited default so one connection cannot hold an unbounded number of streams.
 */
export const MAX_CONCURRENT_STREAMS = 256;

/**
 * Memory one HTTP/2 session may use, in MiB, before Node refuses new streams on it. Each stream
 * may hold up to 256 KiB of unsent frames (src/streaming/sse-connection.ts), so Node's 10 MiB
 * default would start refusing streams of a busy connection long before MAX_CONCURRENT_STREAMS.
 */
const MAX_SESSION_MEMORY_MIB = 64;

/** The certificate material of `application.tls`, read from its files. */
export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca?: Buffer;
}

/** A TLS file that cannot be read or used; the message is the one line startup prints. */
export class TlsFileError extends Error {
  constructor(message: string) {
    super(message.replace(/\r?\n/g, ' '));
    this.name = 'TlsFileError';
  }
}

/**
 * Reads the files of `application.tls` and checks that the key belongs to the certificate, so a
 * wrong file fails here with its name instead of on the first handshake. Used at startup and meant
 * for a configuration reload too (docs/design/rules/browser.md §3, §5). Throws `TlsFileError`.
 */
export function loadTlsMaterial(tls: TlsConfig): TlsMaterial {
  const cert = readTlsFile('cert_file', tls.cert_file);
  const key = readTlsFile('key_file', tls.key_file);
  const ca = tls.ca_file === undefined ? undefined : readTlsFile('ca_file', tls.ca_file);
  const material: TlsMaterial = ca === undefined ? { cert, key } : { cert, key, ca };
  try {
    createSecureContext(material);
  } catch (error) {
    throw new TlsFileError(`application.tls: cannot use ${tls.cert_file} with ${tls.key_file}: ${reasonOf(error)}`);
  }
  return material;
}

function readTlsFile(field: keyof TlsConfig, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : reasonOf(error);
    throw new TlsFileError(`application.tls.${field}: cannot read ${path}: ${why}`);
  }
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Node's `http2.createSecureServer` options: HTTP/2 by ALPN with HTTP/1.1 on the same port, and
 * the connection limits that have an HTTP/2 meaning (docs/security.md, "TLS"): the head size
 * bounds the header list of a stream, the head timeout bounds the TLS handshake.
 */
export function secureServerOptions(material: TlsMaterial, limits: ServerLimits): SecureServerOptions {
  return {
    ...material,
    allowHTTP1: true,
    handshakeTimeout: limits.headers_timeout_ms,
    maxSessionMemory: MAX_SESSION_MEMORY_MIB,
    settings: {
      maxConcurrentStreams: MAX_CONCURRENT_STREAMS,
      maxHeaderListSize: limits.max_header_bytes,
    },
  };
}

/**
 * Serves new certificate material on a running HTTPS server from the next handshake on; open
 * connections keep theirs. For a configuration reload (docs/design/rules/browser.md §5) after `loadTlsMaterial`.
 */
export function replaceTlsMaterial(server: object, material: TlsMaterial): void {
  (server as Pick<TlsServer, 'setSecureContext'>).setSecureContext({ ...material });
}
