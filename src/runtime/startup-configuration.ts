import type { Logger } from 'pino';
import { ConfigLoadError, loadConfig } from '../config/load.js';
import type { AppConfig } from '../config/model.js';
import { ConfigValidationError, validateConfig } from '../config/validate.js';
import { loadTlsMaterial, TlsFileError, type TlsMaterial } from '../http/tls-options.js';
import { fatal } from './fatal.js';

/**
 * The configuration steps of startup (operations.md §4.1 steps 1, 3 and 5), shared by a single
 * process and the primary of several workers: each failure is one line on stderr and exit 1 (D17).
 */

/** Stage A: the file cascade and the environment. */
export function loadStartupConfig(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigLoadError) fatal(`configuration error: ${error.message}`);
    throw error;
  }
}

export interface StartupValidation {
  /** Effective `notification_schema_strict`. */
  readonly strictMode: boolean;
}

/**
 * Stage B. `announce`: log the configuration lines of §4.1 step 3 around it; a worker, whose
 * primary logged them for the same configuration, validates silently.
 */
export function validateStartupConfig(config: AppConfig, logger: Logger, announce: boolean): StartupValidation {
  let strictMode: boolean;
  try {
    const validated = validateConfig(config);
    strictMode = validated.strictMode;
    if (announce) {
      logger.info(
        {
          event_name: 'configuration.global.initialized',
          notification_schema_strict: strictMode,
          base_url: config.application.base_url,
        },
        'Global configuration initialized',
      );
      for (const warning of validated.warnings) logger.warn({ event_name: warning.event }, warning.message);
    }
  } catch (error) {
    if (!(error instanceof ConfigValidationError)) throw error;
    logger.error({ event_name: error.eventName, error: error.message }, 'Configuration validation failed');
    fatal(`configuration error: ${error.message}`);
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

/** The first line once logging is set up (§4.1 step 3). */
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

/** `application.tls`: the certificate files, read and checked (browser.md §3). */
export function loadStartupTls(config: AppConfig, logger: Logger): TlsMaterial | undefined {
  if (!config.application.tls) return undefined;
  try {
    return loadTlsMaterial(config.application.tls);
  } catch (error) {
    if (!(error instanceof TlsFileError)) throw error;
    logger.error({ event_name: 'startup.tls.load.failed', error: error.message }, 'TLS files cannot be used');
    fatal(`configuration error: ${error.message}`);
  }
}
