import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import { createEcpdsPlugin, type EcpdsPlugin } from '../auth/ecpds/ecpds-plugin.js';
import type { NotificationBackend } from '../backend/backend.js';
import { configuredBases } from '../backend/create-backend.js';
import { systemClock } from '../time/clock.js';
import type { AvisoMetrics } from '../metrics/aviso-metrics.js';
import { loadTlsMaterial, replaceTlsMaterial, TlsFileError, type TlsMaterial } from '../http/tls-options.js';
import { SchemaRegistry } from '../schema/schema-registry.js';
import { ConfigLoadError, loadConfig } from './load.js';
import type { AppConfig } from './model.js';
import { hasSchemaChanges, restartOnlySettings, sameSetting, schemaChanges, type SchemaChanges } from './reload-changes.js';
import { ConfigValidationError, schemasListingEcpds, validateConfig, validateJetStreamSettings, type ConfigWarning } from './validate.js';

/** Who asked for the reload, in its log lines. */
export type ReloadSource = 'signal' | 'admin';

export type ReloadOutcome =
  | { readonly ok: true; readonly changes: SchemaChanges; readonly restartRequired: readonly string[] }
  /** `message` is the one line startup would have printed for the same configuration (D17). */
  | { readonly ok: false; readonly message: string };

/** What the admin route and the signal handler need: `POST /api/v1/admin/reload` and `SIGHUP`. */
export interface ConfigurationReload {
  /** `logger`: where its lines go (the admin route passes the request's, for `request_id`). */
  reload(source: ReloadSource, logger?: Logger): Promise<ReloadOutcome>;
  /** The app's authenticator (absent when auth is off), whose admin roles a reload replaces. */
  attachAuthenticator(authenticator: Authenticator | undefined): void;
}

export interface ReloaderDependencies {
  /** The configuration the process started with: what restart-only settings are compared with. */
  readonly startup: AppConfig;
  /** The one registry every route holds; a reload swaps what it answers. */
  readonly registry: SchemaRegistry;
  readonly backend: NotificationBackend;
  /** The same map the stream routes read (and shutdown closes); a reload may add the ECPDS checker. */
  readonly readPlugins: Map<string, EcpdsPlugin>;
  readonly metrics: AvisoMetrics;
  readonly logger: Logger;
  /** The configuration cascade, as at startup; tests may pass another reader. */
  readonly load?: () => AppConfig;
}

/** A configuration that passed every startup check, and what applying it needs. */
interface Candidate {
  readonly config: AppConfig;
  readonly registry: SchemaRegistry;
  readonly warnings: readonly ConfigWarning[];
  readonly newPlugin: EcpdsPlugin | undefined;
  /** `application.tls` read again from its files (browser.md §3), when the server serves TLS. */
  readonly tls: TlsMaterial | undefined;
}

class InvalidConfiguration extends Error {
  constructor(
    /** The line startup prints after `aviso-server: `. */
    readonly line: string,
    /** The startup event the same failure is logged with (§3.4.3). */
    readonly startupEvent: string | undefined,
  ) {
    super(line);
  }
}

/**
 * Live configuration reload (browser.md §5): re-reads the cascade, checks the result exactly as
 * startup does, and only then swaps the schemas and the admin roles in, in one synchronous step.
 * Open streams keep the filter they were opened with. Reloads run one at a time, in request order.
 */
export class ConfigurationReloader implements ConfigurationReload {
  private current: AppConfig;
  private authenticator: Authenticator | undefined;
  private tlsServer: object | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ReloaderDependencies) {
    this.current = deps.startup;
  }

  attachAuthenticator(authenticator: Authenticator | undefined): void {
    this.authenticator = authenticator;
  }

  /**
   * The HTTPS server started with `application.tls`: each reload reads its certificate files again
   * (a renewed certificate is served from the next handshake on; open connections keep theirs).
   */
  attachTlsServer(server: object): void {
    this.tlsServer = server;
  }

  reload(source: ReloadSource, logger: Logger = this.deps.logger): Promise<ReloadOutcome> {
    const run = this.queue.then(() => this.reloadNow(source, logger));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async reloadNow(source: ReloadSource, logger: Logger): Promise<ReloadOutcome> {
    const { metrics } = this.deps;
    logger.info({ event_name: 'configuration.reload.requested', source }, 'Configuration reload requested');
    let candidate: Candidate;
    try {
      candidate = this.check();
    } catch (error) {
      if (!(error instanceof InvalidConfiguration)) throw error;
      metrics.configReload('failure');
      logger.error(
        { event_name: 'configuration.reload.failed', source, ...(error.startupEvent ? { startup_event: error.startupEvent } : {}) },
        error.line,
      );
      return { ok: false, message: error.line };
    }
    return this.apply(candidate, source, logger);
  }

  /** Startup's stages A and B (operations.md §1.6) and the checks main.ts adds; nothing changes here. */
  private check(): Candidate {
    let config: AppConfig;
    try {
      config = (this.deps.load ?? loadConfig)();
    } catch (error) {
      if (error instanceof ConfigLoadError) throw new InvalidConfiguration(`configuration error: ${error.message}`, undefined);
      throw error;
    }
    let validated;
    try {
      validated = validateConfig(config);
    } catch (error) {
      if (error instanceof ConfigValidationError) throw new InvalidConfiguration(`configuration error: ${error.message}`, error.eventName);
      throw error;
    }
    if (config.notification_backend.kind === 'jetstream') {
      // createBackend checks these before it connects; a bad value would stop the next restart.
      try {
        validateJetStreamSettings(config.notification_backend.jetstream);
      } catch (error) {
        if (error instanceof ConfigValidationError) throw new InvalidConfiguration(`backend initialization failed: ${error.message}`, error.eventName);
        throw error;
      }
    }
    let registry: SchemaRegistry;
    try {
      registry = new SchemaRegistry(config.notification_schema, validated.strictMode);
    } catch (error) {
      throw new InvalidConfiguration(`configuration error: ${reasonOf(error)}`, undefined);
    }
    return { config, registry, warnings: validated.warnings, newPlugin: this.readPluginFor(config), tls: this.tlsFor(config) };
  }

  /**
   * The certificate files, read and checked as at startup (the same line when they cannot be used).
   * Turning TLS on or off needs a restart (`application.tls` is then reported as restart-only).
   */
  private tlsFor(config: AppConfig): TlsMaterial | undefined {
    if (!this.tlsServer || !config.application.tls) return undefined;
    try {
      return loadTlsMaterial(config.application.tls);
    } catch (error) {
      if (error instanceof TlsFileError) throw new InvalidConfiguration(`configuration error: ${error.message}`, 'startup.tls.load.failed');
      throw error;
    }
  }

  /**
   * The ECPDS checker is built, as at startup, once some schema opts into it; a process that has
   * one keeps it (its `ecpds` settings change at the next restart).
   */
  private readPluginFor(config: AppConfig): EcpdsPlugin | undefined {
    if (this.deps.readPlugins.has('ecpds') || !config.ecpds) return undefined;
    if (schemasListingEcpds(config).length === 0) return undefined;
    try {
      return createEcpdsPlugin(config.ecpds, { clock: systemClock, telemetry: this.deps.metrics.ecpds });
    } catch (error) {
      throw new InvalidConfiguration(`ECPDS checker could not be built: ${reasonOf(error)}`, 'startup.ecpds.checker_init.failed');
    }
  }

  private async apply(candidate: Candidate, source: ReloadSource, logger: Logger): Promise<ReloadOutcome> {
    const { metrics, registry, backend, readPlugins } = this.deps;
    const { config } = candidate;
    const changes = schemaChanges(this.current.notification_schema, config.notification_schema);
    // Streams first: a request that sees a new schema finds its stream ready (or retries it itself).
    await backend.applySchemas(configuredBases(config));

    // The swap: synchronous, so no request runs between its steps.
    registry.replaceWith(candidate.registry);
    this.authenticator?.replaceAdminRoles(config.auth.admin_roles);
    if (candidate.newPlugin) readPlugins.set('ecpds', candidate.newPlugin);
    if (candidate.tls && this.tlsServer) replaceTlsMaterial(this.tlsServer, candidate.tls);
    const previous = this.current;
    this.current = config;

    for (const warning of candidate.warnings) logger.warn({ event_name: warning.event }, warning.message);
    const restartRequired = restartOnlySettings(this.deps.startup, config);
    if (restartRequired.length > 0) {
      logger.warn(
        { event_name: 'configuration.reload.ignored', source, settings: restartRequired },
        `Settings that take effect at the next restart: ${restartRequired.join(', ')}`,
      );
    }
    metrics.configReload('success');
    logger.info(
      {
        event_name: 'configuration.reload.succeeded',
        source,
        event_types_added: changes.added,
        event_types_removed: changes.removed,
        event_types_changed: changes.changed,
        notification_schema_strict: candidate.registry.strictMode,
        admin_roles_changed: !sameSetting(previous.auth.admin_roles, config.auth.admin_roles),
      },
      `Configuration reloaded: ${describeChanges(changes)}`,
    );
    return { ok: true, changes, restartRequired };
  }
}

function describeChanges(changes: SchemaChanges): string {
  if (!hasSchemaChanges(changes)) return 'no event type changed';
  const part = (label: string, names: readonly string[]) => (names.length > 0 ? [`${label} ${names.join(', ')}`] : []);
  return [...part('added', changes.added), ...part('removed', changes.removed), ...part('changed', changes.changed)].join('; ');
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `SIGHUP` reloads (browser.md §5). Node's default for it is to exit, so the handler is installed
 * once the server listens; before that a hang-up still stops a process that is not serving yet.
 */
export function installReloadSignal(reloader: ConfigurationReload, logger: Logger, shuttingDown: () => boolean): void {
  process.on('SIGHUP', () => {
    // Once shutdown has begun the backend is closing: a reload then would only log its failures.
    if (shuttingDown()) return;
    reloader.reload('signal').catch((error: unknown) =>
      logger.error({ event_name: 'configuration.reload.failed', source: 'signal', error: reasonOf(error) }, 'Configuration reload failed unexpectedly'),
    );
  });
}
