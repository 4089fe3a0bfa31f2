/**
 * @aviso-ts/client, the public entry: exactly what docs/client.md lists under "Public API", so
 * every name here is a promise to users. Tuning constants and helpers the tests need are in
 * `internal.ts`, which the package does not export.
 * Everything here runs in Node 20+ and in browsers, except `JsonFileStore` and
 * `CredentialsFileAuth`, which load Node modules on first use.
 */
export { AvisoClient, type AvisoAdmin } from './client.js';
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
export {
  BasicAuth,
  BearerAuth,
  ChainAuth,
  CredentialsFileAuth,
  DiscoveredAuth,
  EnvironmentAuth,
  parseCredentialsFile,
} from './auth/providers.js';
export type { Checkpoint, StateStore } from './state/store.js';
export { MemoryStore } from './state/memory-store.js';
export { JsonFileStore } from './state/json-file-store.js';
export { resumeKey } from './state/resume-key.js';
export type { Clock, TimerHandle } from './clock.js';
export { isSecureOrLoopback } from './url.js';
