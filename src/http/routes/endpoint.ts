import type { StreamEndpoint } from '../../schema/watch-identifier.js';
import type { ErrorCode } from './error-codes.js';

/** The three POST endpoints that share one request model and differ in their error labels. */
export type EndpointName = 'notify' | StreamEndpoint;

/** The `code` of each endpoint's validation failures; its entry's `error` is the endpoint's label (`Invalid Watch Request`). */
export const VALIDATION_CODES = {
  notify: 'INVALID_NOTIFICATION_REQUEST',
  watch: 'INVALID_WATCH_REQUEST',
  replay: 'INVALID_REPLAY_REQUEST',
} as const satisfies Readonly<Record<EndpointName, ErrorCode>>;
