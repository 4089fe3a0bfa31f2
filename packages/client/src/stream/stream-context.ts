import type { Clock } from '../clock.js';
import type { Transport } from '../http.js';

/**
 * What a supervised watch needs from the client that opened it: its clock, its transport, the base
 * URL as the caller wrote it (part of the resume key) and whether cursors are flushed on exit.
 * `AvisoClient` provides it; the stream takes this narrow view so that the two do not import
 * each other.
 */
export interface StreamContext {
  readonly clock: Clock;
  readonly transport: Transport;
  readonly baseUrlInput: string;
  readonly flushCursorOnExit: boolean;
}
