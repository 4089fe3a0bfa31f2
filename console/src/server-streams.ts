/**
 * The server's open streams as the Streams view shows them (docs/console.md "Streams of the
 * server"): the answer of `GET /api/v1/admin/streams` (docs/api.md), its sorting and the text of
 * its cells. Pure: no DOM.
 */

/** One open stream, fields as the API sends them. */
export interface ServerStream {
  readonly id: string;
  readonly process: string;
  readonly route: string;
  readonly method: string;
  readonly event_type: string;
  readonly filter: Readonly<Record<string, unknown>>;
  readonly topic_pattern: string;
  readonly user: string | null;
  readonly client_address: string;
  readonly opened_at: string;
  readonly phase: string;
  readonly last_sequence: number | null;
  readonly delivered: number;
  readonly buffered_bytes: number;
  readonly lag_ms: number;
}

export interface StreamListing {
  readonly streams: readonly ServerStream[];
  readonly total: number;
  readonly truncated: boolean;
  readonly counts: Readonly<Record<string, number>>;
  readonly processes: {
    readonly answered: readonly string[];
    readonly not_answering: readonly string[];
    readonly cluster_unreachable?: boolean;
  };
  readonly request_id?: string;
}

/** A JSON answer that has the listing's shape (a proxy's page or an error body has not). */
export function isStreamListing(value: unknown): value is StreamListing {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const processes = v.processes as Record<string, unknown> | null | undefined;
  return (
    Array.isArray(v.streams) &&
    typeof v.total === 'number' &&
    typeof v.counts === 'object' &&
    v.counts !== null &&
    typeof processes === 'object' &&
    processes !== null &&
    Array.isArray(processes.answered) &&
    Array.isArray(processes.not_answering)
  );
}

/** What the orange box says: processes whose streams are missing, or a server that could not ask the others; `''` when all answered. */
export function missingText(listing: StreamListing): string {
  const parts: string[] = [];
  const silent = listing.processes.not_answering;
  if (silent.length > 0) parts.push(`Not answering, so their streams are missing: ${silent.join(', ')}.`);
  if (listing.processes.cluster_unreachable === true) {
    parts.push(
      `The server could not ask the other processes of its deployment: only the streams of ${listing.processes.answered.join(', ')} are listed.`,
    );
  }
  return parts.join(' ');
}

/** The orders the table offers: the server's (oldest first), the most lagging or the most buffered first. */
export type SortKey = 'opened' | 'lag' | 'buffered';

/**
 * The rows in the chosen order. Ties keep the server's order (opened, then id), so rows do not
 * swap places between refreshes when their values are equal.
 */
export function sortStreams(streams: readonly ServerStream[], key: SortKey): ServerStream[] {
  const rows = [...streams];
  if (key === 'lag') rows.sort((a, b) => b.lag_ms - a.lag_ms);
  if (key === 'buffered') rows.sort((a, b) => b.buffered_bytes - a.buffered_bytes);
  return rows;
}

/** Counts per event type, the largest first, then by name. */
export function countEntries(counts: Readonly<Record<string, number>>): [string, number][] {
  return Object.entries(counts).sort(([a, m], [b, n]) => n - m || (a < b ? -1 : a > b ? 1 : 0));
}

export function bytesText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function lagText(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** The first eight characters of a stream id, `…` after them when there are more. */
export function shortId(id: string): string {
  return id.length > 9 ? `${id.slice(0, 8)}…` : id;
}

/** `class=od step={"gte":6}`: the canonical filter in its order; `*` for none. */
export function filterText(filter: Readonly<Record<string, unknown>>): string {
  const text = Object.entries(filter)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  return text === '' ? '*' : text;
}

/** `2026-01-15 10:00:01 UTC` from the RFC 3339 `opened_at`; anything else unchanged. */
export function openedText(openedAt: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z$/.exec(openedAt);
  return m ? `${m[1]} ${m[2]} UTC` : openedAt;
}

/** The summary above the table: `3 matching · 5 open in all`, and the limit's cut when there is one. */
export function summaryText(listing: StreamListing): string {
  const all = Object.values(listing.counts).reduce((sum, n) => sum + n, 0);
  const shown = listing.truncated ? ` · showing the first ${listing.streams.length}: raise the limit or narrow the filters` : '';
  return `${listing.total} matching · ${all} open in all${shown}`;
}

/** The query of the listing: only the filters filled in. */
export function listingQuery(eventType: string, user: string, limit: string): string {
  const query = new URLSearchParams();
  if (eventType.trim() !== '') query.set('event_type', eventType.trim());
  if (user.trim() !== '') query.set('user', user.trim());
  if (limit.trim() !== '') query.set('limit', limit.trim());
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}
