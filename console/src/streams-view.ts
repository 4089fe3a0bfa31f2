import { byId, el } from './dom.js';
import { showError } from './error-box.js';
import { describeNetworkError, describeResponse } from './http-error.js';
import {
  bytesText,
  countEntries,
  filterText,
  isStreamListing,
  lagText,
  listingQuery,
  missingText,
  openedText,
  shortId,
  sortStreams,
  summaryText,
  type ServerStream,
  type SortKey,
  type StreamListing,
} from './server-streams.js';

/** How often the table is fetched again while the view is open (docs/console.md). */
export const REFRESH_INTERVAL_MS = 2000;

export interface StreamsViewOptions {
  /** `…/api/v1/`, relative to the page. */
  readonly api: URL;
  /** The token of the form's input, read at each request (an admin's, where authentication is on). */
  readonly token: () => string;
}

function authorization(token: string): Record<string, string> {
  return token.trim() === '' ? {} : { Authorization: `Bearer ${token.trim()}` };
}

/**
 * "Streams of the server": every open stream of the deployment from `GET /api/v1/admin/streams`,
 * fetched again every two seconds while the view is open and the page visible, with the counts
 * per event type, the processes that did not answer, sorting by lag and buffered bytes, and a
 * Close button per stream behind a confirmation dialog (`DELETE /api/v1/admin/streams/{id}`).
 */
export class StreamsView {
  private readonly root = byId<HTMLDetailsElement>('server-streams');
  private readonly eventType = byId<HTMLInputElement>('server-streams-event-type');
  private readonly user = byId<HTMLInputElement>('server-streams-user');
  private readonly limit = byId<HTMLInputElement>('server-streams-limit');
  private readonly auto = byId<HTMLInputElement>('server-streams-auto');
  private readonly status = byId('server-streams-status');
  private readonly errorBox = byId('server-streams-error');
  private readonly silent = byId('server-streams-not-answering');
  private readonly summary = byId('server-streams-summary');
  private readonly counts = byId<HTMLUListElement>('server-streams-counts');
  private readonly table = byId<HTMLTableElement>('server-streams-table');
  private readonly rows = byId<HTMLTableSectionElement>('server-streams-rows');
  private readonly result = byId('server-streams-result');
  private readonly dialog = byId<HTMLDialogElement>('close-stream-dialog');
  private sortKey: SortKey = 'opened';
  private listing: StreamListing | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private inFlight = false;
  /** A load was asked for while one was in flight (a filter changed, a stream was closed): load again after it. */
  private again = false;
  /** The stream the open confirmation dialog is about. */
  private closing: ServerStream | undefined;

  constructor(private readonly options: StreamsViewOptions) {
    this.root.addEventListener('toggle', () => this.toggled());
    byId('server-streams-refresh').addEventListener('click', () => void this.load());
    for (const input of [this.eventType, this.user, this.limit]) input.addEventListener('change', () => void this.load());
    this.auto.addEventListener('change', () => this.schedule());
    for (const button of this.table.querySelectorAll<HTMLButtonElement>('button[data-sort]')) {
      button.addEventListener('click', () => this.sortBy(button.dataset.sort as SortKey));
    }
    byId('close-stream-confirm').addEventListener('click', () => void this.confirmClose());
    byId('close-stream-cancel').addEventListener('click', () => this.dialog.close());
    this.dialog.addEventListener('close', () => (this.closing = undefined));
    document.addEventListener('visibilitychange', () => this.schedule());
    // A link to `/console/#server-streams` opens the view directly.
    if (window.location.hash === '#server-streams') this.root.open = true;
  }

  /** The event types of the schema, offered as suggestions for the filter. */
  setEventTypes(names: readonly string[]): void {
    byId('server-streams-event-types').replaceChildren(...names.map((name) => el('option', { value: name })));
  }

  private toggled(): void {
    if (this.root.open) void this.load();
    this.schedule();
  }

  /** Polls only while someone can see the table: the view open, the page visible, auto refresh on. */
  private schedule(): void {
    const wanted = this.root.open && this.auto.checked && document.visibilityState === 'visible';
    if (wanted && this.timer === undefined) this.timer = setInterval(() => void this.load(), REFRESH_INTERVAL_MS);
    if (!wanted && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async load(): Promise<void> {
    // A slow answer is not asked for again on top of itself; what changed meanwhile is fetched after it.
    if (this.inFlight) {
      this.again = true;
      return;
    }
    this.inFlight = true;
    try {
      const url = new URL(`admin/streams${listingQuery(this.eventType.value, this.user.value, this.limit.value)}`, this.options.api);
      const response = await fetch(url, { headers: authorization(this.options.token()) });
      const text = await response.text();
      let answer: unknown;
      try {
        answer = JSON.parse(text) as unknown;
      } catch {
        answer = undefined;
      }
      if (!response.ok || !isStreamListing(answer)) {
        // A refusal (a token without the admin role, say) must not leave an earlier list on show as if current.
        this.listing = undefined;
        this.clear();
        return showError(this.errorBox, describeResponse(response, text));
      }
      this.errorBox.hidden = true;
      this.listing = answer;
      this.status.textContent = `updated ${new Date().toLocaleTimeString()}`;
      this.render();
    } catch (error) {
      showError(this.errorBox, describeNetworkError(error));
    } finally {
      this.inFlight = false;
      if (this.again) {
        this.again = false;
        void this.load();
      }
    }
  }

  private sortBy(key: SortKey): void {
    this.sortKey = key;
    this.render();
  }

  private render(): void {
    const listing = this.listing;
    this.table.dataset.sort = this.sortKey;
    for (const header of this.table.querySelectorAll<HTMLElement>('th[data-sort-key]')) {
      header.setAttribute(
        'aria-sort',
        header.dataset.sortKey === this.sortKey ? (this.sortKey === 'opened' ? 'ascending' : 'descending') : 'none',
      );
    }
    if (!listing) return;
    this.summary.textContent = summaryText(listing);
    const missing = missingText(listing);
    this.silent.hidden = missing === '';
    this.silent.textContent = missing;
    this.counts.replaceChildren(
      ...countEntries(listing.counts).map(([type, n]) => {
        const chip = el(
          'button',
          { type: 'button', title: `only ${type}` },
          el('span', { class: 'type' }, type),
          ' ',
          el('span', { class: 'n' }, String(n)),
        );
        chip.addEventListener('click', () => {
          this.eventType.value = type;
          void this.load();
        });
        return el('li', { 'data-event-type': type }, chip);
      }),
    );
    const processes = byId('server-streams-processes');
    processes.textContent = `answered: ${listing.processes.answered.join(', ') || 'none'}`;
    this.rows.replaceChildren(...sortStreams(listing.streams, this.sortKey).map((stream) => this.row(stream)));
    if (listing.streams.length === 0)
      this.rows.append(el('tr', { class: 'empty' }, el('td', { colspan: '14' }, 'No open stream matches.')));
  }

  private clear(): void {
    this.summary.textContent = '';
    this.silent.hidden = true;
    this.counts.replaceChildren();
    byId('server-streams-processes').textContent = '';
    this.rows.replaceChildren();
  }

  private row(stream: ServerStream): HTMLTableRowElement {
    const close = el('button', { type: 'button', class: 'close-stream' }, 'Close…');
    close.addEventListener('click', () => this.askClose(stream));
    return el(
      'tr',
      { 'data-id': stream.id, 'data-phase': stream.phase },
      // The first eight characters tell the streams apart (as a short commit hash does) and keep
      // the table within the page; the whole id is on hover and in the close dialog.
      el('td', { class: 'id', title: stream.id }, el('code', {}, shortId(stream.id))),
      el('td', { class: 'process' }, stream.process),
      el('td', { class: 'route' }, `${stream.method} ${stream.route}`),
      el('td', { class: 'event-type' }, stream.event_type),
      el('td', { class: 'filter', title: stream.topic_pattern }, el('code', {}, filterText(stream.filter))),
      el('td', { class: 'user' }, stream.user ?? '—'),
      el('td', { class: 'client' }, stream.client_address),
      el('td', { class: 'opened' }, openedText(stream.opened_at)),
      el('td', { class: 'phase' }, stream.phase),
      el('td', { class: 'number last-sequence' }, stream.last_sequence === null ? '—' : String(stream.last_sequence)),
      el('td', { class: 'number delivered' }, String(stream.delivered)),
      el('td', { class: 'number buffered' }, bytesText(stream.buffered_bytes)),
      el('td', { class: 'number lag' }, lagText(stream.lag_ms)),
      el('td', { class: 'actions' }, close),
    );
  }

  private askClose(stream: ServerStream): void {
    this.closing = stream;
    byId('close-stream-what').replaceChildren(
      el('code', {}, stream.id),
      ` (${stream.method} ${stream.route} ${stream.event_type} ${filterText(stream.filter)}, user ${stream.user ?? 'none'}, on ${stream.process})`,
    );
    this.dialog.showModal();
  }

  private async confirmClose(): Promise<void> {
    const stream = this.closing;
    this.dialog.close();
    if (!stream) return;
    this.result.hidden = false;
    this.result.className = 'pending';
    this.result.textContent = `closing ${stream.id}…`;
    try {
      const response = await fetch(new URL(`admin/streams/${encodeURIComponent(stream.id)}`, this.options.api), {
        method: 'DELETE',
        headers: authorization(this.options.token()),
      });
      const text = await response.text();
      if (!response.ok) return showError(this.result, describeResponse(response, text));
      const reply = JSON.parse(text) as { message?: string; process?: string; request_id?: string };
      this.result.className = 'success';
      this.result.replaceChildren(
        `${reply.message ?? 'Stream closed'}: `,
        el('code', {}, stream.id),
        ` on ${reply.process ?? stream.process} · request `,
        el('code', {}, reply.request_id ?? '?'),
      );
    } catch (error) {
      showError(this.result, describeNetworkError(error));
    }
    await this.load();
  }
}
