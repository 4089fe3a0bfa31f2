import { otlpTarget } from '../logging/otlp/otlp-target.js';
import { additionalOriginsProblem, corsOriginProblem, tlsSettingProblem } from './browser-access.js';
import { homepageLinkProblem } from './homepage-links.js';
import { idempotencyProblem } from './idempotency-model.js';
import { notificationEndpointProblem } from './notification-endpoint-model.js';
import type { AppConfig } from './model.js';
import { checkEcpds, checkGlobalAuth, checkStreamAuth, checkStreamPlugins } from './validate-auth.js';
import { checkBackend } from './validate-backend.js';
import { checkSchemas } from './validate-schemas.js';
import { VALIDATION_EVENTS, WARNING_EVENTS, configError, failWith, type ConfigWarning, type Fail } from './validation-errors.js';
import { trustedProxiesProblem } from './trusted-proxies.js';

export { KNOWN_PLUGINS, schemasListingEcpds } from './validate-auth.js';
export { validateJetStreamSettings } from './validate-backend.js';
export { ConfigValidationError, VALIDATION_EVENTS, WARNING_EVENTS, type ConfigWarning } from './validation-errors.js';

/**
 * The second stage of startup: the rules that span several fields, which the model's types
 * cannot say, checked after the file and the environment are loaded and before anything is
 * built. The first broken rule stops startup, and each failure carries the log event it is
 * logged with (`VALIDATION_EVENTS`).
 *
 * The order is the reference's, so that a file with several mistakes reports the same one first:
 * the backend's kind and settings (its caps, the in-memory byte budget, no JetStream retention
 * that deletes what replays still read, one worker for an in-memory history); then each schema:
 * valid and distinct topic bases, `key_order` naming only declared fields, `storage_policy` only
 * with a topic, a topic for every schema, the allowed values, each handler's capabilities, the
 * spatial and point-cloud structure and the caps; then authentication, the read plugins and
 * per-stream roles, metrics, ECPDS, and the positive watch settings. The numbered stages are in
 * docs/design/rules/operations.md §1.6.
 */

export interface ValidatedConfig {
  config: AppConfig;
  /** Effective `notification_schema_strict`: as configured, or on exactly when schemas are declared. */
  strictMode: boolean;
  /** Startup warnings to log at `warn` once the logger exists. */
  warnings: ConfigWarning[];
}

export function validateConfig(config: AppConfig): ValidatedConfig {
  const warnings: ConfigWarning[] = [];
  checkLogging(config);
  checkApplicationLimits(config);
  checkHomepageLinks(config);
  checkBrowserAccess(config);
  checkBackend(config);
  checkSchemas(config, warnings);
  checkGlobalAuth(config);
  checkStreamPlugins(config);
  checkStreamAuth(config);
  checkMetrics(config);
  checkEcpds(config);
  checkWatchEndpoint(config);
  const notificationEndpoint = notificationEndpointProblem(config.notification_endpoint);
  if (notificationEndpoint !== undefined) configError(notificationEndpoint);
  const idempotency = idempotencyProblem(config.idempotency);
  if (idempotency !== undefined) configError(idempotency);

  const strict = resolveStrictMode(config);
  if (strict.warning !== undefined) warnings.push(strict.warning);
  if (config.notification_backend.jetstream.enable_auto_reconnect !== undefined) {
    // Gone in aviso-server 0.13; still accepted so existing files keep starting (docs/design/rules/reference-0.13.md §6).
    warnings.push({
      event: WARNING_EVENTS.deprecatedSetting,
      message:
        'notification_backend.jetstream.enable_auto_reconnect is deprecated and ignored: the NATS client always reconnects, bounded by max_reconnect_attempts (0 = unlimited)',
    });
  }
  if (!config.auth.enabled) {
    warnings.push({
      event: WARNING_EVENTS.adminOpen,
      message: 'auth.enabled is false: the admin endpoints (/api/v1/admin/*) are open to anyone who can reach the server (D12)',
    });
  }
  return { config, strictMode: strict.strict, warnings };
}

/**
 * Strict mode unset follows the schemas (on when any is declared); set, it is kept, with a warning
 * when it is off although schemas are declared, since unknown event types are then accepted.
 */
function resolveStrictMode(config: AppConfig): { strict: boolean; warning?: ConfigWarning } {
  const schemaCount = Object.keys(config.notification_schema ?? {}).length;
  const explicit = config.notification_schema_strict;
  if (explicit === undefined) return { strict: schemaCount > 0 };
  if (!explicit && schemaCount > 0) {
    return {
      strict: false,
      warning: {
        event: WARNING_EVENTS.strictDisabled,
        message: `notification_schema_strict is explicitly false although notification_schema defines ${schemaCount} event type(s): unknown event types are accepted (generic mode)`,
      },
    };
  }
  return { strict: explicit };
}

/** OTLP export, when on, needs somewhere to export to. */
function checkLogging(config: AppConfig): void {
  try {
    otlpTarget(config.logging.otlp);
  } catch (error) {
    configError(error instanceof Error ? error.message : String(error));
  }
}

/**
 * The connection limits of `application`: Node refuses a head timeout longer than the whole-request
 * timeout, so say which field is wrong before anything is built.
 */
function checkApplicationLimits(config: AppConfig): void {
  const {
    headers_timeout_ms: headers,
    request_timeout_ms: request,
    max_streams: streams,
    max_connections: connections,
  } = config.application;
  if (headers > request) {
    failWith(VALIDATION_EVENTS.configuration)(
      `application.headers_timeout_ms: must not exceed application.request_timeout_ms (${headers} > ${request})`,
    );
  }
  // D44: an HTTP/1.1 stream holds a connection, so streams alone must never take every one.
  if (streams >= connections) {
    failWith(VALIDATION_EVENTS.configuration)(
      `application.max_streams: must be less than application.max_connections (${streams} >= ${connections}), so that streams leave connections for /health, /ready and notify`,
    );
  }
}

/** Own and CORS origins written as browsers send them, the TLS files named, trusted proxies as addresses or networks. */
function checkBrowserAccess(config: AppConfig): void {
  const { application } = config;
  const problem =
    additionalOriginsProblem(application.additional_origins) ??
    corsOriginProblem(application.cors) ??
    tlsSettingProblem(application.tls) ??
    trustedProxiesProblem(application.trusted_proxies);
  if (problem !== undefined) configError(problem);
}

/** D29: the homepage links. */
function checkHomepageLinks(config: AppConfig): void {
  const problem = homepageLinkProblem(config.application.homepage);
  if (problem !== undefined) configError(problem);
}

/** Metrics, when enabled, need a port of their own. */
function checkMetrics(config: AppConfig): void {
  const metrics = config.metrics;
  if (!metrics.enabled) return;
  const fail: Fail = failWith(VALIDATION_EVENTS.metrics);
  if (metrics.port === undefined) fail('metrics.port: is required when metrics.enabled is true');
  if (metrics.port === 0) fail('metrics.port: must not be 0 when metrics.enabled is true');
  if (metrics.port === config.application.port) {
    fail(`metrics.port: must differ from application.port (both are ${metrics.port})`);
  }
}

/**
 * The watch settings that must be positive, and the buffers' floors: a stream's buffer holds at
 * least four of the largest notifications, the process's at least one stream's. `replay_batch_delay_ms: 0`
 * is allowed: it means no pause.
 */
function checkWatchEndpoint(config: AppConfig): void {
  const watch = config.watch_endpoint;
  for (const field of [
    'sse_heartbeat_interval_sec',
    'connection_max_duration_sec',
    'replay_batch_size',
    'concurrent_notification_processing',
    'max_historical_notifications',
    'max_buffered_events',
    'max_buffered_bytes',
    'max_total_buffered_bytes',
    'stall_timeout_sec',
  ] as const) {
    if (watch[field] <= 0) configError(`watch_endpoint.${field}: must be greater than 0, got ${watch[field]}`);
  }
  const largestBody = config.application.max_body_bytes;
  if (watch.max_buffered_bytes < 4 * largestBody) {
    configError(
      `watch_endpoint.max_buffered_bytes: must be at least 4 × application.max_body_bytes (${4 * largestBody}), got ${watch.max_buffered_bytes}`,
    );
  }
  if (watch.max_total_buffered_bytes < watch.max_buffered_bytes) {
    configError(
      `watch_endpoint.max_total_buffered_bytes: must be at least watch_endpoint.max_buffered_bytes (${watch.max_buffered_bytes}), got ${watch.max_total_buffered_bytes}`,
    );
  }
}
