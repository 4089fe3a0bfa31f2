import { JetStreamApiError } from '@nats-io/jetstream';

/**
 * Sorting NATS client errors into what the backend does about them (docs/design/rules/backends.md §7.6, §7.11).
 * The client exports few error classes, so names and JetStream API codes are read directly.
 */

const STREAM_NOT_FOUND = 10059;
const NO_MESSAGE_FOUND = 10037;
const STREAM_STORE_EOF = 10057;
/** "message delete failed", with a description that says why (memory stores: `sequence N not found`). */
const MESSAGE_DELETE_FAILED = 10043;
const STREAM_NAME_IN_USE = 10058;

function apiCode(error: unknown): number | undefined {
  return error instanceof JetStreamApiError ? error.code : undefined;
}

export function isStreamNotFound(error: unknown): boolean {
  return apiCode(error) === STREAM_NOT_FOUND || (error instanceof Error && error.name === 'StreamNotFoundError');
}

/**
 * Deleting a sequence that is not stored: "no message found", "stream store EOF" past the end of a
 * file store, or a delete failure that says the sequence was not found (memory store).
 */
export function isMessageNotFound(error: unknown): boolean {
  const code = apiCode(error);
  if (code === NO_MESSAGE_FOUND || code === STREAM_STORE_EOF) return true;
  return code === MESSAGE_DELETE_FAILED && /not found/i.test((error as Error).message);
}

export function isStreamNameInUse(error: unknown): boolean {
  return apiCode(error) === STREAM_NAME_IN_USE;
}

/**
 * Nobody answered a JetStream request: the stream is gone (a publish to an unbound subject) or
 * JetStream is not ready yet after a restart. The client reports both as "no responders".
 */
export function isNoResponders(error: unknown): boolean {
  return error instanceof Error && (error.name === 'NoRespondersError' || error.name === 'JetStreamNotEnabled');
}

/** The connection went away before the operation could complete; retrying may succeed. */
export function isConnectionLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    error.name === 'ClosedConnectionError' ||
    error.name === 'DrainingConnectionError' ||
    error.name === 'ConnectionError' ||
    error instanceof NatsUnavailableError
  );
}

/** Raised by the backend while it has no connection at all (between a loss and a reconnect). */
export class NatsUnavailableError extends Error {
  constructor(message = 'NATS connection is not available') {
    super(message);
    this.name = 'NatsUnavailableError';
  }
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The client refused to send a message over the server's `max_payload` (it checks before sending). */
export function isMaxPayloadExceeded(error: unknown): boolean {
  return error instanceof Error && /max_payload/.test(error.message);
}
