import type { Logger } from 'pino';
import type { NotificationBackend } from '../backend/backend.js';
import type { Clock } from '../time/clock.js';
import type { CloudEventRenderer } from './cloudevent.js';
import type { ConnectionGuards } from './connection-watch.js';
import type { StreamSettings } from './stream-request.js';

/**
 * What every stream of the process works with: the supervisor holds these, and hands the same
 * fields to each stream session and its replay phase (with the stream request's logger, so a
 * stream's lines carry its request's context).
 */
export interface StreamDependencies {
  readonly backend: NotificationBackend;
  readonly renderer: CloudEventRenderer;
  readonly clock: Clock;
  readonly settings: StreamSettings;
  readonly logger: Logger;
  /** The process's byte budget and stall watchdog, shared by every stream (sse-connection.ts). */
  readonly guards: ConnectionGuards;
  /** Records a live delivery's lag from its acceptance (storage time, ns) to now (`aviso_delivery_lag_seconds`). */
  readonly deliveryLag: (acceptedAtNs: bigint) => void;
}
