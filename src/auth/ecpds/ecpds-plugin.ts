import type { Clock } from '../../time/clock.js';
import type { EcpdsConfig } from '../../config/model.js';
import { AuthError } from '../auth-error.js';
import type { ReadAuthorizationPlugin, ReadCheckContext } from '../read-plugin.js';
import { DestinationCache, type CacheLookup, type CacheOutcome } from './destination-cache.js';
import { clientSettingsFromConfig, DestinationClient } from './destination-client.js';
import { noopEcpdsTelemetry, type DecisionOutcome, type EcpdsTelemetry } from './ecpds-telemetry.js';
import { failureLogName, type FailureOutcome } from './fetch-outcome.js';
import { echo } from '../../text/echo.js';

export interface EcpdsPluginDeps {
  readonly clock: Clock;
  readonly telemetry?: EcpdsTelemetry;
}

export interface EcpdsPlugin extends ReadAuthorizationPlugin {
  readonly name: 'ecpds';
  /** Releases pooled upstream connections; the plugin is unusable afterwards. */
  close(): void;
}

/** How one check ended, before it is logged, counted and turned into a response. */
type Verdict =
  | { readonly decision: 'admin_bypass' }
  | { readonly decision: 'deny_match_key_missing' }
  | { readonly decision: 'unavailable'; readonly fetchOutcome: FailureOutcome }
  | { readonly decision: 'allow' | 'deny_destination'; readonly destination: string };

/**
 * The ECPDS destination check for reads (docs/design/rules/operations.md §2.10.2): admins bypass it; otherwise the
 * request's `match_key` value must be in the caller's ECPDS destination set, fetched through a
 * per-user cache.
 */
export function createEcpdsPlugin(config: EcpdsConfig, deps: EcpdsPluginDeps): EcpdsPlugin {
  const telemetry = deps.telemetry ?? noopEcpdsTelemetry;
  const client = new DestinationClient(clientSettingsFromConfig(config));
  const cache = new DestinationCache({
    ttlMs: config.cache_ttl_seconds * 1000,
    maxEntries: config.max_entries,
    clock: deps.clock,
  });

  async function evaluate(context: ReadCheckContext, onCacheOutcome: (outcome: CacheOutcome) => void): Promise<Verdict> {
    if (context.isAdmin) return { decision: 'admin_bypass' };
    const destination = context.canonicalValue(config.match_key);
    if (destination === undefined) return { decision: 'deny_match_key_missing' };

    const username = context.user.username;
    const lookup: CacheLookup = cache.lookup(username, () => client.fetch(username, context.logger));
    onCacheOutcome(lookup.cacheOutcome);
    let destinations: ReadonlySet<string>;
    if (lookup.cacheOutcome === 'hit') {
      telemetry.cacheHit();
      destinations = lookup.destinations;
    } else {
      telemetry.cacheMiss();
      const fetched = await lookup.fetch;
      // Only the request that ran the fetch counts it, so the counter equals real upstream calls.
      if (lookup.cacheOutcome === 'miss_fetched') telemetry.fetched(fetched.outcome);
      if (!fetched.ok) {
        return { decision: 'unavailable', fetchOutcome: fetched.outcome };
      }
      destinations = fetched.destinations;
    }
    const decision = destinations.has(destination) ? 'allow' : 'deny_destination';
    return { decision, destination };
  }

  return {
    name: 'ecpds',

    async check(context: ReadCheckContext): Promise<void> {
      const { logger } = context;
      const username = context.user.username;
      const checkFields = { event_type: context.eventType, username };
      let cacheOutcome: CacheOutcome | 'none' = 'none';
      logger.debug({ event_name: 'auth.ecpds.check.started', ...checkFields, cache_outcome: cacheOutcome }, 'ECPDS check started');

      let verdict: Verdict;
      try {
        verdict = await evaluate(context, (outcome) => {
          cacheOutcome = outcome;
          logger.debug(
            {
              event_name: outcome === 'hit' ? 'auth.ecpds.cache.hit' : 'auth.ecpds.cache.miss',
              ...checkFields,
              cache_outcome: outcome,
            },
            outcome === 'hit' ? 'ECPDS cache hit' : 'ECPDS cache miss',
          );
        });
      } catch (error) {
        logger.error(
          {
            event_name: 'auth.ecpds.check.error',
            ...checkFields,
            cache_outcome: cacheOutcome,
            error: error instanceof Error ? error.message : String(error),
          },
          'ECPDS check failed unexpectedly',
        );
        finish('error');
        throw new AuthError(500, 'ECPDS check failed unexpectedly');
      }

      const fields = { ...checkFields, cache_outcome: cacheOutcome };
      switch (verdict.decision) {
        case 'admin_bypass':
          logger.debug({ event_name: 'auth.ecpds.admin.bypass', ...fields }, 'Admin skipped the ECPDS check');
          finish(verdict.decision);
          return;
        case 'deny_match_key_missing':
          logger.warn(
            { event_name: 'auth.ecpds.check.denied', ...fields, reason: 'MatchKeyMissing', match_key: config.match_key },
            'ECPDS check denied: match key missing',
          );
          finish(verdict.decision);
          throw new AuthError(403, `Required field '${config.match_key}' not found in request identifiers`);
        case 'unavailable':
          logger.warn(
            { event_name: 'auth.ecpds.check.unavailable', ...fields, fetch_outcome: failureLogName(verdict.fetchOutcome) },
            'ECPDS service is inaccessible',
          );
          finish(verdict.decision);
          throw new AuthError(503, 'ECPDS service is inaccessible');
        case 'allow':
          logger.info({ event_name: 'auth.ecpds.check.allowed', ...fields, destination: verdict.destination }, 'ECPDS check allowed');
          finish(verdict.decision);
          return;
        case 'deny_destination':
          logger.warn(
            {
              event_name: 'auth.ecpds.check.denied',
              ...fields,
              reason: 'DestinationNotInList',
              destination: echo(verdict.destination),
            },
            'ECPDS check denied: destination not in list',
          );
          finish(verdict.decision);
          throw new AuthError(403, `User '${echo(username)}' does not have access to destination '${echo(verdict.destination)}'`);
      }
    },

    close(): void {
      client.close();
    },
  };

  function finish(decision: DecisionOutcome): void {
    telemetry.decided(decision);
    telemetry.cacheSize(cache.size);
  }
}
