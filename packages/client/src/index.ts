/**
 * @aviso-ts/client: a typed client for aviso notification servers (docs/design/rules/client.md §2–§4).
 * Everything here runs in Node 20+ and in browsers, except `JsonFileStore` and
 * `CredentialsFileAuth`, which load Node modules on first use.
 */
export { AvisoClient, AvisoAdmin } from './client.js';
export { NotificationStream } from './stream/notification-stream.js';
export type { OpenStreamInfo, StreamClosed, StreamList, StreamListFilter } from './open-streams.js';
export type {
  AdminResult,
  AvisoClientOptions,
  HistoryGapNotice,
  Identifier,
  IdentifierValue,
  Notification,
  NotifyFailed,
  NotifyItem,
  NotifyManyOptions,
  NotifyOutcome,
  NotifyRequest,
  NotifyResult,
  NotifyStored,
  SchemaList,
  SequenceResetNotice,
  StreamNotice,
  StreamOpening,
  WatchRequest,
  WatchStart,
  WatchStatus,
} from './types.js';
export {
  AuthError,
  AvisoError,
  ConfigError,
  DecodeError,
  HistoryGapError,
  HttpError,
  MalformedEventError,
  StateStoreError,
  StreamProtocolError,
  TransportError,
  TriggerFailedError,
  type HistoryGap,
} from './errors.js';
export type { AuthProvider } from './auth/provider.js';
export { BasicAuth, BearerAuth, ChainAuth, CredentialsFileAuth, DiscoveredAuth, EnvironmentAuth, parseCredentialsFile } from './auth/providers.js';
export type { Checkpoint, StateStore } from './state/store.js';
export { MemoryStore } from './state/memory-store.js';
export { JsonFileStore, STATE_FILE_VERSION } from './state/json-file-store.js';
export { KEY_FORMAT_VERSION, KEY_FORMAT_VERSIONS, normaliseBaseUrl, resumeKey } from './state/resume-key.js';
export { systemClock, type Clock, type TimerHandle } from './clock.js';
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
export { isSecureOrLoopback, urlWithoutUserinfo } from './url.js';
