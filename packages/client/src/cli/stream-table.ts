import type { OpenStreamInfo, StreamList } from '../index.js';
import { humaniseTimestamp } from './commands/simple.js';

/**
 * `aviso admin streams` on a terminal (docs/cli.md): one row per open stream under a header, then
 * a summary line with the total and the counts per event type. Pure, so it is unit-tested.
 */

/** Widest filter shown; the full filter is in `--json`. */
const FILTER_WIDTH = 48;

/**
 * A value that came from the server, as one cell: every control character (newline and tab
 * included: a cell is one line) is shown escaped, so a filter value or a user name cannot move
 * the cursor or recolour the terminal.
 */
export function cell(text: string): string {
  return [...text].map((c) => (isControl(c) ? `\\u{${c.charCodeAt(0).toString(16)}}` : c)).join('');
}

/** C0 and C1 control characters. */
function isControl(c: string): boolean {
  const code = c.charCodeAt(0);
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

/** `k=v k2=v2` with the canonical filter's keys in its order, JSON for anything but a string. */
export function filterText(filter: Readonly<Record<string, unknown>>): string {
  const text = Object.entries(filter)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  if (text === '') return '*';
  return text.length > FILTER_WIDTH ? `${text.slice(0, FILTER_WIDTH - 1)}…` : text;
}

export function bytesText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function lagText(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

const COLUMNS: readonly { readonly title: string; readonly right?: boolean; readonly value: (s: OpenStreamInfo) => string }[] = [
  { title: 'ID', value: (s) => s.id },
  { title: 'PROCESS', value: (s) => s.process },
  { title: 'ROUTE', value: (s) => `${s.method} ${s.route}` },
  { title: 'EVENT TYPE', value: (s) => s.eventType },
  { title: 'FILTER', value: (s) => filterText(s.filter) },
  { title: 'USER', value: (s) => s.user ?? '-' },
  { title: 'CLIENT', value: (s) => s.clientAddress },
  { title: 'OPENED', value: (s) => humaniseTimestamp(s.openedAt) },
  { title: 'PHASE', value: (s) => s.phase },
  { title: 'LAST SEQ', right: true, value: (s) => (s.lastSequence === null ? '-' : String(s.lastSequence)) },
  { title: 'DELIVERED', right: true, value: (s) => String(s.delivered) },
  { title: 'BUFFERED', right: true, value: (s) => bytesText(s.bufferedBytes) },
  { title: 'LAG', right: true, value: (s) => lagText(s.lagMs) },
];

/** `12 open streams (dissemination 4, mars 8); showing the first 10: raise --limit or narrow the filters`. */
export function summaryLine(list: StreamList): string {
  const counts = Object.entries(list.counts)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([type, n]) => `${cell(type)} ${n}`)
    .join(', ');
  const matching = `${list.total} matching stream${list.total === 1 ? '' : 's'}`;
  const all = Object.values(list.counts).reduce((sum, n) => sum + n, 0);
  const perType = `${all} open in all${counts === '' ? '' : ` (${counts})`}`;
  const shown = list.truncated ? `; showing the first ${list.streams.length}: raise --limit or narrow the filters` : '';
  return `${matching}, ${perType}${shown}`;
}

export function streamTable(list: StreamList): string {
  const rows = list.streams.map((stream) => COLUMNS.map((column) => cell(column.value(stream))));
  const widths = COLUMNS.map((column, i) => Math.max(column.title.length, ...rows.map((row) => [...(row[i] ?? '')].length)));
  const line = (values: readonly string[]): string =>
    values
      .map((value, i) => {
        const width = widths[i] ?? 0;
        const pad = ' '.repeat(Math.max(0, width - [...value].length));
        return COLUMNS[i]?.right ? pad + value : value + pad;
      })
      .join('  ')
      .trimEnd();
  const table = list.streams.length === 0 ? '' : `${[line(COLUMNS.map((c) => c.title)), ...rows.map(line)].join('\n')}\n`;
  return `${table}${summaryLine(list)}\n`;
}
