/**
 * The package's internal entry, for its own tests: the public entry plus the tuning and helpers
 * they check directly. Not in package.json's `exports`, so no user can import it, and the `aviso`
 * command may not either (the layer check of `npm run lint`): nothing here is a promise.
 */
export * from './index.js';
export { systemClock } from './clock.js';
export { STATE_FILE_VERSION } from './state/json-file-store.js';
export { KEY_FORMAT_VERSION, KEY_FORMAT_VERSIONS, normaliseBaseUrl } from './state/resume-key.js';
export {
  backoffDelay,
  retryAfterDelay,
  watchdogTimeout,
  OPENING_DEADLINE_MS,
  RETRY_AFTER_CAP_MS,
  SERVER_SHUTDOWN_WAIT_MS,
  SHORT_SESSION_MS,
} from './stream/backoff.js';
export { MAX_EVENT_BYTES, MAX_LINE_BYTES } from './stream/sse-reader.js';
export { urlWithoutUserinfo } from './url.js';
