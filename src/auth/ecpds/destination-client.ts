import type { Logger } from 'pino';
import type { EcpdsConfig } from '../../config/model.js';
import { boundedGet, createHttpAgents, ExchangeError, type HttpAgents } from './bounded-get.js';
import { parseDestinationList } from './destination-list.js';
import { mergeServerAnswers, statusOutcome, type DestinationFetch, type PartialOutagePolicy, type ServerAnswer } from './fetch-outcome.js';

/** Everything one fetch needs, with timeouts in milliseconds so tests can use short budgets. */
export interface DestinationClientSettings {
  readonly username: string;
  readonly password: string;
  readonly servers: readonly string[];
  readonly targetField: string;
  readonly policy: PartialOutagePolicy;
  readonly connectTimeoutMs: number;
  readonly requestTimeoutMs: number;
}

export function clientSettingsFromConfig(config: EcpdsConfig): DestinationClientSettings {
  return {
    username: config.username,
    password: config.password,
    servers: config.servers,
    targetField: config.target_field,
    policy: config.partial_outage_policy,
    connectTimeoutMs: config.connect_timeout_seconds * 1000,
    requestTimeoutMs: config.request_timeout_seconds * 1000,
  };
}

/**
 * A destination list is a few records per destination; anything near this size is not ECPDS
 * talking, and buffering it unbounded would let one bad upstream exhaust memory.
 */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * docs/design/rules/operations.md §2.10.3: the segments `ecpds/v1/destination/list` appended to the server's path (one trailing
 * `/` does not produce `//`), and `id` form-encoded (space → `+`, `+` → `%2B`, `&` → `%26`), which
 * is exactly what `URLSearchParams` serialises. User info in the configured URL is dropped: the
 * service account comes from the section, and credentials must not ride in URLs that get logged.
 */
export function destinationListUrl(server: string, username: string): URL {
  const url = new URL(server);
  url.username = '';
  url.password = '';
  const base = url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
  url.pathname = `${base}/ecpds/v1/destination/list`;
  url.search = new URLSearchParams({ id: username }).toString();
  url.hash = '';
  return url;
}

export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/** The server as it may appear in logs: any user info replaced by `[REDACTED]` (docs/design/rules/operations.md §3.4.1). */
export function displayServer(server: string): string {
  return server.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1[REDACTED]@');
}

/**
 * Fetches one user's destination set from every configured server in parallel, without retries,
 * and merges the answers under the partial-outage policy (docs/design/rules/operations.md §2.10.5). Transport and protocol
 * failures become outcomes, never exceptions; only a bug rejects.
 */
export class DestinationClient {
  private readonly authorization: string;
  private readonly agents: HttpAgents = createHttpAgents();

  constructor(private readonly settings: DestinationClientSettings) {
    // An empty list would make `strict` vacuously succeed with an empty set; startup validation
    // already forbids it, so reaching here is a wiring bug worth failing loudly on.
    if (settings.servers.length === 0) throw new Error('ECPDS destination client needs at least one server');
    this.authorization = basicAuthorization(settings.username, settings.password);
  }

  async fetch(username: string, logger: Logger): Promise<DestinationFetch> {
    const answers = await Promise.all(this.settings.servers.map((server, index) => this.fetchFrom(server, index, username, logger)));
    return mergeServerAnswers(answers, this.settings.policy);
  }

  /** Releases pooled keep-alive connections. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private async fetchFrom(server: string, index: number, username: string, logger: Logger): Promise<ServerAnswer> {
    const fields = { username, server_index: index, server: displayServer(server) };
    const answer = await this.ask(destinationListUrl(server, username), fields, logger);
    if (answer.outcome === 'success') {
      logger.debug(
        { event_name: 'auth.ecpds.fetch.succeeded', ...fields, destinations: answer.destinations.size },
        'ECPDS destination list fetched',
      );
    } else {
      logger.warn(
        { event_name: 'auth.ecpds.fetch.failed', ...fields, outcome: answer.outcome, error: answer.error },
        'ECPDS destination list fetch failed',
      );
    }
    return answer;
  }

  private async ask(url: URL, fields: Readonly<Record<string, unknown>>, logger: Logger): Promise<ServerAnswer> {
    let status: number;
    let body: string | undefined;
    try {
      ({ status, body } = await boundedGet(url, {
        headers: { accept: 'application/json', authorization: this.authorization },
        connectTimeoutMs: this.settings.connectTimeoutMs,
        totalTimeoutMs: this.settings.requestTimeoutMs,
        maxBodyBytes: MAX_BODY_BYTES,
        agents: this.agents,
      }));
    } catch (error) {
      if (error instanceof ExchangeError) return { outcome: 'unreachable', error: error.message };
      throw error;
    }

    if (status < 200 || status > 299) return { outcome: statusOutcome(status), error: `ECPDS answered HTTP ${status}` };
    if (body === undefined) {
      return { outcome: 'invalid_response', error: `response body exceeds ${MAX_BODY_BYTES} bytes` };
    }
    const list = parseDestinationList(body, this.settings.targetField);
    if (!list.valid) return { outcome: 'invalid_response', error: `invalid destination list: ${list.problem}` };

    if (list.skippedInactive > 0) {
      logger.debug(
        { event_name: 'auth.ecpds.fetch.skipped_inactive', ...fields, skipped: list.skippedInactive, total: list.total },
        'Skipped inactive ECPDS destinations',
      );
    }
    if (list.skippedWithoutTarget > 0) {
      logger.debug(
        {
          event_name: 'auth.ecpds.fetch.skipped_record',
          ...fields,
          skipped: list.skippedWithoutTarget,
          total: list.total,
          target_field: this.settings.targetField,
        },
        'Skipped ECPDS destinations without a string target field',
      );
    }
    return { outcome: 'success', destinations: list.destinations };
  }
}
