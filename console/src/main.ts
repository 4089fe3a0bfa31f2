import { batchSummary, failedItems, isBatchAnswer, parsePastedBatch } from './batch-publish.js';
import { avisoCommand, curlCommand, type CommandTarget } from './commands.js';
import { byId, el } from './dom.js';
import { formatJson } from './frames.js';
import { showError } from './error-box.js';
import { describeNetworkError, describeResponse } from './http-error.js';
import { bodyFor, type ConsoleForm, type EndKind, type Operation, type StartKind, type StreamEndpoint } from './request-body.js';
import { SchemaForm } from './schema-form.js';
import type { SchemaList, SchemaView } from './schema-model.js';
import { requestHeaders } from './sse-reader.js';
import { StreamPanel } from './stream-panel.js';
import { StreamsView } from './streams-view.js';

/**
 * The operator console (docs/console.md): wires the form, the token, the command view, the
 * publish button, the stream panels and the view of the server's open streams. Every URL is relative to the page, so the console also
 * works behind a proxy that serves the server under a path prefix.
 */

const API = new URL('../api/v1/', window.location.href);
const BASE_URL = new URL('..', window.location.href).href.replace(/\/+$/, '');

const eventType = byId<HTMLSelectElement>('event-type');
const start = byId<HTMLSelectElement>('start');
const startValue = byId<HTMLInputElement>('start-value');
const end = byId<HTMLSelectElement>('end');
const endValue = byId<HTMLInputElement>('end-value');
const payload = byId<HTMLTextAreaElement>('payload');
/** Kept in this input only: never stored, never put in a URL or a command. */
const token = byId<HTMLInputElement>('token');
const form = byId<HTMLFormElement>('request-form');
const streams = byId<HTMLElement>('streams');
const streamCount = byId<HTMLElement>('stream-count');
const schemaForm = new SchemaForm(byId('fields'));
let schemas: SchemaList['schema'] = {};
const panels = new Set<StreamPanel>();
const streamsView = new StreamsView({ api: API, token: () => token.value });

function currentForm(): ConsoleForm {
  return {
    eventType: eventType.value,
    fields: schemaForm.values(),
    start: start.value as StartKind,
    startValue: startValue.value,
    end: end.value as EndKind,
    endValue: endValue.value,
    payload: payload.value,
  };
}

function commandTarget(operation: Operation): CommandTarget {
  return { baseUrl: BASE_URL, operation, body: bodyFor(currentForm(), operation), withToken: token.value.trim() !== '' };
}

function refresh(): void {
  startValue.hidden = start.value === 'live';
  endValue.hidden = end.value === 'none';
  startValue.placeholder = start.value === 'from_date' ? '2026-01-15T10:00:00Z' : '0';
  endValue.placeholder = end.value === 'to_date' ? '2026-01-16T10:00:00Z' : '10';
  const operation = (form.querySelector<HTMLInputElement>('input[name="command-for"]:checked')?.value ?? 'watch') as Operation;
  const target = commandTarget(operation);
  byId('request-json').textContent = formatJson(target.body);
  byId('curl-command').textContent = curlCommand(target);
  byId('aviso-command').textContent = avisoCommand(target);
}

async function loadSchemas(): Promise<void> {
  const box = byId('schema-status');
  try {
    const response = await fetch(new URL('schema', API));
    const text = await response.text();
    if (!response.ok) return showError(box, describeResponse(response, text));
    const list = JSON.parse(text) as SchemaList;
    schemas = list.schema;
    eventType.replaceChildren(...list.event_types.map((name) => el('option', { value: name }, name)));
    streamsView.setEventTypes(list.event_types);
    if (list.event_types.length === 0) {
      box.hidden = false;
      box.textContent = list.message ?? 'No event types are configured.';
    }
    renderFields();
  } catch (error) {
    showError(box, describeNetworkError(error));
  }
}

function renderFields(): void {
  const schema: SchemaView | undefined = schemas[eventType.value];
  schemaForm.render(schema);
  byId('payload-required').hidden = !schema?.payload?.required;
  refresh();
}

function openPanel(endpoint: StreamEndpoint): void {
  const panel = new StreamPanel({
    endpoint,
    url: new URL(endpoint, API).href,
    token: token.value,
    command: commandTarget(endpoint),
    onClose: (closed) => {
      panels.delete(closed);
      renderStreamCount();
    },
  });
  panels.add(panel);
  streams.prepend(panel.element);
  renderStreamCount();
}

function renderStreamCount(): void {
  streamCount.textContent = `${panels.size} open`;
  // Over HTTP/1.1 a browser opens at most six connections per server, and each stream holds one.
  const protocol = (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined)?.nextHopProtocol ?? '';
  byId('connection-note').hidden = !(protocol.startsWith('http/1') && panels.size >= 5);
}

async function publish(): Promise<void> {
  const box = byId('publish-result');
  box.hidden = false;
  box.className = 'pending';
  box.textContent = 'publishing…';
  try {
    const response = await fetch(new URL('notification', API), {
      method: 'POST',
      headers: requestHeaders(token.value),
      body: JSON.stringify(bodyFor(currentForm(), 'notify')),
    });
    const text = await response.text();
    if (!response.ok) return showError(box, describeResponse(response, text));
    const reply = JSON.parse(text) as { request_id?: string; processed_at?: string };
    box.className = 'success';
    box.replaceChildren('Published at ', el('code', {}, reply.processed_at ?? '?'), ' request ', el('code', {}, reply.request_id ?? '?'));
  } catch (error) {
    showError(box, describeNetworkError(error));
  }
}

/** Sends the pasted notifications in one batch request and lists what was not stored. */
async function publishBatch(): Promise<void> {
  const box = byId('batch-result');
  box.hidden = false;
  const pasted = parsePastedBatch(byId<HTMLTextAreaElement>('batch-items').value);
  if ('problem' in pasted) {
    box.className = 'error-box';
    box.textContent = pasted.problem;
    return;
  }
  box.className = 'pending';
  box.textContent = `publishing ${pasted.items.length}…`;
  try {
    const response = await fetch(new URL('notification/batch', API), {
      method: 'POST',
      headers: requestHeaders(token.value),
      body: JSON.stringify(pasted.items),
    });
    const text = await response.text();
    let answer: unknown;
    try {
      answer = JSON.parse(text) as unknown;
    } catch {
      answer = undefined;
    }
    if (!isBatchAnswer(answer)) return showError(box, describeResponse(response, text));
    const failed = failedItems(answer.results);
    box.className = failed.length === 0 ? 'success' : 'error-box';
    box.replaceChildren(
      el('strong', {}, batchSummary(answer)),
      ' request ',
      el('code', {}, answer.request_id ?? '?'),
      ...(failed.length === 0 ? [] : [el('ul', { class: 'batch-failures' }, ...failed.map((line) => el('li', {}, line)))]),
    );
  } catch (error) {
    showError(box, describeNetworkError(error));
  }
}

form.addEventListener('input', refresh);
form.addEventListener('change', refresh);
eventType.addEventListener('change', renderFields);
form.addEventListener('submit', (event) => event.preventDefault());
byId('watch').addEventListener('click', () => openPanel('watch'));
byId('replay').addEventListener('click', () => openPanel('replay'));
byId('publish').addEventListener('click', () => void publish());
byId('publish-batch').addEventListener('click', () => void publishBatch());
byId('close-all').addEventListener('click', () => {
  for (const panel of [...panels]) panel.close();
});
renderStreamCount();
void loadSchemas();
