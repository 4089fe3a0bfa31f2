import type { Logger } from 'pino';
import type { AppConfig } from '../config/model.js';
import type { TlsMaterial } from '../http/transport/tls-options.js';
import { loadConfiguration, readTlsMaterial, validateConfiguration, type ConfigurationRefusal } from './configuration-preparation.js';
import { fatal } from './fatal.js';

/**
 * The configuration steps of startup (docs/design/rules/operations.md §4.1 steps 1, 3 and 5), shared by a single
 * process and the primary of several workers: each failure is one line on stderr and exit 1 (D17).
 */

/** Stage A: the file cascade and the environment. */
export function loadStartupConfig(): AppConfig {
  const loaded = loadConfiguration();
  if (!loaded.ok) fatal(loaded.refusal.line);
  return loaded.value;
}

/** A refusal at startup: its log line when logging is set up, then the line on stderr and exit 1. */
export function refuseStartup(refusal: ConfigurationRefusal, logger: Logger): never {
  logger.error({ event_name: refusal.event, error: refusal.reason }, refusal.summary);
  fatal(refusal.line);
}

export interface StartupValidation {
  /** Effective `notification_schema_strict`. */
  readonly strictMode: boolean;
}

/**
 * Stage B. `announce`: log the configuration lines of docs/design/rules/operations.md §4.1 step 3 around it; a worker, whose
 * primary logged them for the same configuration, validates silently.
 */
export function validateStartupConfig(config: AppConfig, logger: Logger, announce: boolean): StartupValidation {
  const validated = validateConfiguration(config);
  if (!validated.ok) refuseStartup(validated.refusal, logger);
  const { strictMode } = validated.value;
  if (announce) {
    logger.info(
      {
        event_name: 'configuration.global.initialized',
        notification_schema_strict: strictMode,
        base_url: config.application.base_url,
      },
      'Global configuration initialized',
    );
    for (const warning of validated.value.warnings) logger.warn({ event_name: warning.event }, warning.message);
  }
  if (announce) {
    // Secrets in the dump are redacted by key (jwt_secret, password, token) like every log attribute.
    logger.info({ event_name: 'startup.configuration.dumped', config }, 'Effective configuration');
    logger.info(
      {
        event_name: 'startup.configuration.loaded',
        bind_host: config.application.host,
        bind_port: config.application.port,
        backend_kind: config.notification_backend.kind,
        has_notification_schema: config.notification_schema !== undefined,
      },
      'Configuration ready',
    );
  }
  return { strictMode };
}

/** The first line once logging is set up, so an operator sees which configuration the server runs. */
export function logConfigurationLoaded(config: AppConfig, logger: Logger): void {
  logger.info(
    {
      event_name: 'configuration.load.succeeded',
      host: config.application.host,
      port: config.application.port,
      backend_kind: config.notification_backend.kind,
      has_notification_schema: config.notification_schema !== undefined,
    },
    'Configuration loaded',
  );
}

/** `application.tls`: the certificate files, read and checked; a missing file or a key that does not match fails startup. */
export function loadStartupTls(config: AppConfig, logger: Logger): TlsMaterial | undefined {
  const tls = readTlsMaterial(config);
  if (!tls.ok) refuseStartup(tls.refusal, logger);
  return tls.value;
}
