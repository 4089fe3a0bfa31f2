import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import type { EcpdsPlugin } from '../auth/ecpds/ecpds-plugin.js';
import type { NotificationBackend } from '../backend/backend.js';
import { configuredBases } from './create-backend.js';
import type { AppConfig } from '../config/model.js';
import { hasSchemaChanges, restartOnlySettings, sameSetting, schemaChanges, type SchemaChanges } from '../config/reload-changes.js';
import type { ReloadOutcome, ReloadSource } from '../config/reload-outcome.js';
import type { ConfigurationReload } from '../http/routes/reload-route.js';
import { replaceTlsMaterial } from '../http/transport/tls-options.js';
import type { AvisoMetrics } from '../metrics/aviso-metrics.js';
import type { SchemaRegistry } from '../schema/schema-registry.js';
import { prepareConfiguration, type PreparedConfiguration } from './configuration-preparation.js';
import { reasonOf } from './fatal.js';

export type { ConfigurationReload } from '../http/routes/reload-route.js';
export type { ReloadOutcome, ReloadSource } from '../config/reload-outcome.js';

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

/**
 * Live configuration reload (docs/design/rules/browser.md §5): re-reads the cascade, checks the result exactly as
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
    const { metrics, readPlugins } = this.deps;
    logger.info({ event_name: 'configuration.reload.requested', source }, 'Configuration reload requested');
    const prepared = prepareConfiguration({
      ...(this.deps.load ? { load: this.deps.load } : {}),
      keepEcpdsChecker: readPlugins.has('ecpds'),
      ecpdsTelemetry: metrics.ecpds,
      readTls: this.tlsServer !== undefined,
    });
    if (!prepared.ok) {
      const { line, event } = prepared.refusal;
      metrics.configReload('failure');
      logger.error({ event_name: 'configuration.reload.failed', source, ...(event ? { startup_event: event } : {}) }, line);
      return { ok: false, message: line };
    }
    return this.apply(prepared.value, source, logger);
  }

  private async apply(candidate: PreparedConfiguration, source: ReloadSource, logger: Logger): Promise<ReloadOutcome> {
    const { metrics, registry, backend, readPlugins } = this.deps;
    const { config } = candidate;
    const changes = schemaChanges(this.current.notification_schema, config.notification_schema);
    // Streams first: a request that sees a new schema finds its stream ready (or retries it itself).
    await backend.applySchemas(configuredBases(config));

    // The swap: synchronous, so no request runs between its steps.
    registry.replaceWith(candidate.registry);
    this.authenticator?.replaceAdminRoles(config.auth.admin_roles);
    if (candidate.ecpdsChecker) readPlugins.set('ecpds', candidate.ecpdsChecker);
    if (candidate.tls && this.tlsServer) replaceTlsMaterial(this.tlsServer, candidate.tls);
    const previous = this.current;
    this.current = config;

    for (const warning of candidate.validation.warnings) logger.warn({ event_name: warning.event }, warning.message);
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

/**
 * `SIGHUP` reloads (docs/design/rules/browser.md §5). Node's default for it is to exit, so the handler is installed
 * once the server listens; before that a hang-up still stops a process that is not serving yet.
 */
export function installReloadSignal(reloader: ConfigurationReload, logger: Logger, shuttingDown: () => boolean): void {
  process.on('SIGHUP', () => {
    // Once shutdown has begun the backend is closing: a reload then would only log its failures.
    if (shuttingDown()) return;
    reloader
      .reload('signal')
      .catch((error: unknown) =>
        logger.error(
          { event_name: 'configuration.reload.failed', source: 'signal', error: reasonOf(error) },
          'Configuration reload failed unexpectedly',
        ),
      );
  });
}
