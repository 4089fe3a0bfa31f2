import { createEcpdsPlugin, type EcpdsPlugin } from '../auth/ecpds/ecpds-plugin.js';
import type { EcpdsTelemetry } from '../auth/ecpds/ecpds-telemetry.js';
import { systemClock } from '../time/clock.js';
import { ConfigLoadError, loadConfig } from '../config/load.js';
import type { AppConfig } from '../config/model.js';
import {
  ConfigValidationError,
  schemasListingEcpds,
  validateConfig,
  validateJetStreamSettings,
  type ValidatedConfig,
} from '../config/validate.js';
import { loadTlsMaterial, TlsFileError, type TlsMaterial } from '../http/transport/tls-options.js';
import { SchemaRegistry } from '../schema/schema-registry.js';
import { reasonOf } from './fatal.js';

/**
 * Every check a configuration passes before a process serves it, in one place for startup and
 * reload: load → validate → backend settings → schema registry → read plugins → TLS. Each step
 * answers its value or one refusal; startup turns a refusal into its line on stderr and exit 1,
 * a reload into a refused reload with the same line (D17). Startup runs the steps one at a time:
 * it sets up logging between the first two, reads the TLS files before it decides whether this
 * process serves or becomes the primary of several workers, and leaves the registry, the ECPDS
 * checker and the backend settings to the process that serves (`serving.ts`), where the metrics
 * the checker reports to exist.
 */

/** Why a configuration cannot be served. */
export interface ConfigurationRefusal {
  /** The one line, as printed after `aviso-server: `. */
  readonly line: string;
  /** The startup event the failure is logged with (docs/design/rules/operations.md §3.4.3); none for the file cascade. */
  readonly event: string | undefined;
  /** The message of that startup log line. */
  readonly summary: string;
  /** The cause alone, the `error` attribute of that line. */
  readonly reason: string;
}

export type Prepared<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly refusal: ConfigurationRefusal };

const accepted = <T>(value: T): Prepared<T> => ({ ok: true, value });

function refused(line: string, event: string | undefined, summary: string, reason: string): { ok: false; refusal: ConfigurationRefusal } {
  return { ok: false, refusal: { line, event, summary, reason } };
}

/** Stage A: the file cascade and the environment. */
export function loadConfiguration(load: () => AppConfig = loadConfig): Prepared<AppConfig> {
  try {
    return accepted(load());
  } catch (error) {
    if (!(error instanceof ConfigLoadError)) throw error;
    return refused(`configuration error: ${error.message}`, undefined, 'Configuration load failed', error.message);
  }
}

/** Stage B. */
export function validateConfiguration(config: AppConfig): Prepared<ValidatedConfig> {
  try {
    return accepted(validateConfig(config));
  } catch (error) {
    if (!(error instanceof ConfigValidationError)) throw error;
    return refused(`configuration error: ${error.message}`, error.eventName, 'Configuration validation failed', error.message);
  }
}

/** Stage C1: what the JetStream backend checks before it connects; a bad value would stop the next restart. */
export function checkBackendSettings(config: AppConfig): Prepared<undefined> {
  if (config.notification_backend.kind !== 'jetstream') return accepted(undefined);
  try {
    validateJetStreamSettings(config.notification_backend.jetstream);
    return accepted(undefined);
  } catch (error) {
    if (!(error instanceof ConfigValidationError)) throw error;
    return refused(`backend initialization failed: ${error.message}`, error.eventName, 'Backend initialization failed', error.message);
  }
}

export function buildSchemaRegistry(config: AppConfig, strictMode: boolean): Prepared<SchemaRegistry> {
  try {
    return accepted(new SchemaRegistry(config.notification_schema, strictMode));
  } catch (error) {
    return refused(`configuration error: ${reasonOf(error)}`, undefined, 'Schema registry could not be built', reasonOf(error));
  }
}

/** The ECPDS checker, built once a section is configured and some stream opts into it (docs/design/rules/operations.md §2.10.1). */
export function buildEcpdsChecker(config: AppConfig, telemetry: EcpdsTelemetry): Prepared<EcpdsPlugin | undefined> {
  if (!config.ecpds || schemasListingEcpds(config).length === 0) return accepted(undefined);
  try {
    return accepted(createEcpdsPlugin(config.ecpds, { clock: systemClock, telemetry }));
  } catch (error) {
    return refused(
      `ECPDS checker could not be built: ${reasonOf(error)}`,
      'startup.ecpds.checker_init.failed',
      'ECPDS checker could not be built',
      reasonOf(error),
    );
  }
}

/** `application.tls`: the certificate files, read and checked (docs/design/rules/browser.md §3). */
export function readTlsMaterial(config: AppConfig): Prepared<TlsMaterial | undefined> {
  if (!config.application.tls) return accepted(undefined);
  try {
    return accepted(loadTlsMaterial(config.application.tls));
  } catch (error) {
    if (!(error instanceof TlsFileError)) throw error;
    return refused(`configuration error: ${error.message}`, 'startup.tls.load.failed', 'TLS files cannot be used', error.message);
  }
}

/** The next configuration a serving process may switch to, every check passed. */
export interface PreparedConfiguration {
  readonly config: AppConfig;
  readonly validation: ValidatedConfig;
  readonly registry: SchemaRegistry;
  /** Absent when no checker is needed or `keepEcpdsChecker` said the process has one. */
  readonly ecpdsChecker: EcpdsPlugin | undefined;
  /** Absent unless `readTls`. */
  readonly tls: TlsMaterial | undefined;
}

export interface PreparationOptions {
  readonly load?: () => AppConfig;
  /** A process that has an ECPDS checker keeps it (its `ecpds` settings change at the next restart). */
  readonly keepEcpdsChecker: boolean;
  readonly ecpdsTelemetry: EcpdsTelemetry;
  /**
   * A process serving TLS reads its certificate files again; turning TLS on or off needs a
   * restart (`application.tls` is then reported as restart-only).
   */
  readonly readTls: boolean;
}

/** Every step in order, for a process that serves already; nothing changes here. */
export function prepareConfiguration(options: PreparationOptions): Prepared<PreparedConfiguration> {
  const loaded = loadConfiguration(options.load);
  if (!loaded.ok) return loaded;
  const config = loaded.value;
  const validated = validateConfiguration(config);
  if (!validated.ok) return validated;
  const backend = checkBackendSettings(config);
  if (!backend.ok) return backend;
  const registry = buildSchemaRegistry(config, validated.value.strictMode);
  if (!registry.ok) return registry;
  const checker = options.keepEcpdsChecker ? accepted(undefined) : buildEcpdsChecker(config, options.ecpdsTelemetry);
  if (!checker.ok) return checker;
  const tls = options.readTls ? readTlsMaterial(config) : accepted(undefined);
  if (!tls.ok) return tls;
  return accepted({ config, validation: validated.value, registry: registry.value, ecpdsChecker: checker.value, tls: tls.value });
}
