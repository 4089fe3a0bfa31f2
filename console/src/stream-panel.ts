import { avisoCommand, curlCommand, type CommandTarget } from './commands.js';
import { el } from './dom.js';
import { showError } from './error-box.js';
import { classifyFrame, formatJson, type ClassifiedFrame } from './frames.js';
import type { ShownError } from './http-error.js';
import type { StreamEndpoint } from './request-body.js';
import { openStream, type OpenStream } from './sse-reader.js';
import { WaitingFrames, type ArrivedFrame } from './waiting-frames.js';

/** Numbers the panels of this page, so each can be told apart (`data-stream`). */
let panelsOpened = 0;

/** Frames kept on screen per stream; older ones are dropped (the counter still counts them). */
const MAX_SHOWN_FRAMES = 500;

export interface PanelOptions {
  readonly endpoint: StreamEndpoint;
  readonly url: string;
  readonly token: string;
  readonly command: CommandTarget;
  readonly onClose: (panel: StreamPanel) => void;
}

/**
 * One open watch or replay: its own panel with state, counter, pause/resume, clear and close,
 * its request and equivalent commands, and every frame newest first. Closing it ends only its
 * own stream.
 */
export class StreamPanel {
  readonly element: HTMLElement;
  private readonly list: HTMLOListElement;
  private readonly state: HTMLElement;
  private readonly counter: HTMLElement;
  private readonly requestId: HTMLElement;
  private readonly pauseButton: HTMLButtonElement;
  private readonly errorBox: HTMLElement;
  private readonly stream: OpenStream;
  private readonly waiting = new WaitingFrames(MAX_SHOWN_FRAMES);
  private paused = false;
  private notifications = 0;
  private frames = 0;

  constructor(private readonly options: PanelOptions) {
    const body = options.command.body;
    this.state = el('span', { class: 'state', 'data-state': 'opening' }, 'opening');
    this.counter = el('span', { class: 'counter' });
    this.requestId = el('code', { class: 'request-id' });
    this.pauseButton = el('button', { type: 'button', class: 'pause' }, 'Pause');
    const clearButton = el('button', { type: 'button', class: 'clear' }, 'Clear');
    const closeButton = el('button', { type: 'button', class: 'close' }, 'Close');
    this.errorBox = el('div', { class: 'error-box', role: 'alert', hidden: true });
    this.list = el('ol', { class: 'frames', reversed: true });
    this.element = el(
      'section',
      { class: 'stream', 'data-endpoint': options.endpoint, 'data-stream': String((panelsOpened += 1)) },
      el(
        'header',
        {},
        el('strong', { class: 'title' }, `${options.endpoint} ${String(body.event_type)}`),
        this.state,
        this.counter,
        el('span', { class: 'request' }, 'request ', this.requestId),
        el('span', { class: 'buttons' }, this.pauseButton, clearButton, closeButton),
      ),
      el(
        'details',
        { class: 'request-body' },
        el('summary', {}, 'request and commands'),
        el('pre', {}, formatJson(body)),
        el('pre', { class: 'command curl' }, curlCommand(options.command)),
        el('pre', { class: 'command aviso' }, avisoCommand(options.command)),
      ),
      this.errorBox,
      this.list,
    );
    this.pauseButton.addEventListener('click', () => this.togglePause());
    clearButton.addEventListener('click', () => this.list.replaceChildren());
    closeButton.addEventListener('click', () => this.close());
    this.renderCounter();
    this.stream = openStream(
      { url: options.url, body, token: options.token },
      {
        onOpen: (requestId) => {
          this.setState('open');
          this.requestId.textContent = requestId ?? '';
        },
        onFrame: (event, data) => this.receive(classifyFrame(event, data)),
        onRefused: (error) => this.refused(error),
        onEnd: (how, reason) => this.setState(how === 'dropped' ? `dropped${reason ? `: ${reason}` : ''}` : how),
      },
    );
  }

  close(): void {
    this.stream.cancel();
    this.element.remove();
    this.options.onClose(this);
  }

  private receive(frame: ClassifiedFrame): void {
    this.frames += 1;
    if (frame.kind === 'notification') this.notifications += 1;
    if (frame.requestId && !this.requestId.textContent) this.requestId.textContent = frame.requestId;
    // Stamped now, so a frame that waits out a pause keeps the time it arrived.
    const arrived: ArrivedFrame = { frame, arrivedAt: new Date() };
    if (this.paused) this.waiting.push(arrived);
    else this.show(arrived);
    this.renderCounter();
  }

  private show({ frame, arrivedAt }: ArrivedFrame): void {
    const json = formatJson(frame.data);
    const item = el(
      'li',
      { class: `frame ${frame.kind}`, 'data-kind': frame.kind, 'data-label': frame.label },
      el('span', { class: 'badge' }, frame.label),
      el('span', { class: 'summary' }, frame.summary),
      el('time', {}, arrivedAt.toLocaleTimeString()),
      el('details', { open: frame.kind === 'notification' }, el('summary', {}, 'JSON'), el('pre', {}, json)),
    );
    this.list.prepend(item);
    while (this.list.childElementCount > MAX_SHOWN_FRAMES) this.list.lastElementChild?.remove();
  }

  private togglePause(): void {
    this.paused = !this.paused;
    if (!this.paused) for (const arrived of this.waiting.take()) this.show(arrived);
    this.renderCounter();
  }

  private refused({ requestId, ...error }: ShownError): void {
    this.setState('refused');
    if (requestId) this.requestId.textContent = requestId;
    // The request id goes in the panel's header, so the box does not repeat it.
    showError(this.errorBox, error);
  }

  private setState(state: string): void {
    this.state.textContent = state;
    this.state.dataset.state = state.split(':')[0] ?? state;
  }

  private renderCounter(): void {
    this.pauseButton.textContent = this.paused ? `Resume${this.waiting.count ? ` (${this.waiting.count} waiting)` : ''}` : 'Pause';
    this.counter.textContent = `${this.notifications} notification${this.notifications === 1 ? '' : 's'} · ${this.frames} frame${this.frames === 1 ? '' : 's'}`;
  }
}
