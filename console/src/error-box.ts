import { el } from './dom.js';
import type { ShownError } from './http-error.js';

/**
 * Shows a refused request in place (docs/console.md): its title, the server's message and, when
 * known, the request id. The same box for the schema load, a publish and a stream panel.
 */
export function showError(box: HTMLElement, error: ShownError): void {
  box.hidden = false;
  box.className = 'error-box';
  box.replaceChildren(
    el('strong', {}, error.title),
    ' ',
    el('span', { class: 'message' }, error.message),
    ...(error.requestId ? [el('span', { class: 'request' }, ' request ', el('code', {}, error.requestId))] : []),
  );
}
