import { pino, type Logger } from 'pino';
import type { AuthUser } from '../../../../src/auth/auth-user.js';
import type { ReadCheckContext } from '../../../../src/auth/read-plugin.js';
import type { DestinationClientSettings } from '../../../../src/auth/ecpds/destination-client.js';
import type { DecisionOutcome, EcpdsTelemetry, FetchOutcome } from '../../../../src/auth/ecpds/ecpds-telemetry.js';
import type { EcpdsConfig } from '../../../../src/config/model.js';
import { AuthError } from '../../../../src/auth/auth-error.js';
import type { ApiError } from '../../../../src/http/routes/api-error.js';
import { authErrorResponse } from '../../../../src/http/routes/error-bodies.js';
import { createLogger } from '../../../../src/logging/logger.js';
import { ECPDS_SERVICE_ACCOUNT } from '../../../support/fake-ecpds.js';

/** Shared set-up of the ECPDS plugin tests. */

export const MATCH_KEY = 'destination';

export function ecpdsConfig(servers: readonly string[], overrides: Partial<EcpdsConfig> = {}): EcpdsConfig {
  return {
    username: ECPDS_SERVICE_ACCOUNT.username,
    password: ECPDS_SERVICE_ACCOUNT.password,
    servers: [...servers],
    match_key: MATCH_KEY,
    target_field: 'name',
    cache_ttl_seconds: 300,
    max_entries: 10_000,
    request_timeout_seconds: 30,
    connect_timeout_seconds: 5,
    partial_outage_policy: 'strict',
    ...overrides,
  };
}

export function clientSettings(servers: readonly string[], overrides: Partial<DestinationClientSettings> = {}): DestinationClientSettings {
  return {
    username: ECPDS_SERVICE_ACCOUNT.username,
    password: ECPDS_SERVICE_ACCOUNT.password,
    servers,
    targetField: 'name',
    policy: 'strict',
    connectTimeoutMs: 5_000,
    requestTimeoutMs: 30_000,
    ...overrides,
  };
}

export type LogLine = Readonly<Record<string, unknown>> & { readonly attributes: Readonly<Record<string, unknown>> };

/** The production logger at `trace`, writing into memory (pino writes to a plain sink synchronously). */
export class LogCapture {
  readonly raw: string[] = [];
  readonly logger: Logger = createLogger({
    level: 'trace',
    serviceVersion: 'test',
    env: {},
    destination: { write: (line: string) => void this.raw.push(line) },
  });

  get lines(): LogLine[] {
    return this.raw.flatMap((chunk) => chunk.split('\n').filter(Boolean)).map((line) => JSON.parse(line) as LogLine);
  }

  get text(): string {
    return this.raw.join('');
  }

  /** Attributes of every event with this `event.name`, in order. */
  events(name: string): Readonly<Record<string, unknown>>[] {
    return this.lines.filter((line) => line.attributes['event.name'] === name).map((line) => line.attributes);
  }

  eventNames(): unknown[] {
    return this.lines.map((line) => line.attributes['event.name']);
  }
}

export const silentLogger: Logger = pino({ level: 'silent' });

export function readerUser(username: string): AuthUser {
  return { username, realm: 'localrealm', roles: ['reader'], attributes: {} };
}

export function readContext(options: {
  username: string;
  destination?: string;
  isAdmin?: boolean;
  logger?: Logger;
  canonicalValue?: (field: string) => string | undefined;
}): ReadCheckContext {
  return {
    eventType: 'dissemination',
    user: readerUser(options.username),
    isAdmin: options.isAdmin ?? false,
    canonicalValue: options.canonicalValue ?? ((field) => (field === MATCH_KEY ? options.destination : undefined)),
    logger: options.logger ?? silentLogger,
  };
}

/** Telemetry that records each callback as `name` or `name:argument`. */
export class RecordingTelemetry implements EcpdsTelemetry {
  readonly calls: string[] = [];

  cacheHit(): void {
    this.calls.push('cacheHit');
  }

  cacheMiss(): void {
    this.calls.push('cacheMiss');
  }

  cacheSize(entries: number): void {
    this.calls.push(`cacheSize:${entries}`);
  }

  fetched(outcome: FetchOutcome): void {
    this.calls.push(`fetched:${outcome}`);
  }

  decided(outcome: DecisionOutcome): void {
    this.calls.push(`decided:${outcome}`);
  }

  take(): string[] {
    return this.calls.splice(0);
  }
}

/**
 * The answer the `AuthError` a promise rejects with becomes on the wire; fails the test if it
 * resolves or rejects otherwise.
 */
export async function apiErrorOf(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AuthError) return authErrorResponse(error);
    throw error;
  }
  throw new Error('expected a rejection with an AuthError');
}
