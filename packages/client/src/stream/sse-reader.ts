import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { StreamProtocolError } from '../errors.js';

export const MAX_LINE_BYTES = 16 * 1024 * 1024;
export const MAX_EVENT_BYTES = 32 * 1024 * 1024;

export interface SseFrame {
  readonly event: string;
  readonly data: string;
}

/**
 * Frames SSE bytes with eventsource-parser, after enforcing the aviso client's size limits on the
 * raw bytes (a line over 16 MiB or an event over 32 MiB is a protocol error), which the parser
 * itself does not bound.
 */
export class SseReader {
  private readonly decoder = new TextDecoder();
  private readonly frames: SseFrame[] = [];
  private readonly parser = createParser({
    onEvent: (message: EventSourceMessage) => this.frames.push({ event: message.event ?? 'message', data: message.data }),
  });
  private lineBytes = 0;
  private eventBytes = 0;
  private lastWasCr = false;

  /** Feeds one chunk and returns the frames it completed. */
  feed(chunk: Uint8Array): SseFrame[] {
    this.measure(chunk);
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
    return this.frames.splice(0);
  }

  private measure(chunk: Uint8Array): void {
    for (const byte of chunk) {
      if (byte === 0x0a || byte === 0x0d) {
        // CRLF is one line end; a blank line ends the event.
        if (byte === 0x0a && this.lastWasCr) {
          this.lastWasCr = false;
          continue;
        }
        this.lastWasCr = byte === 0x0d;
        if (this.lineBytes === 0) this.eventBytes = 0;
        this.lineBytes = 0;
        continue;
      }
      this.lastWasCr = false;
      this.lineBytes++;
      this.eventBytes++;
      if (this.lineBytes > MAX_LINE_BYTES) throw new StreamProtocolError(`SSE line longer than ${MAX_LINE_BYTES} bytes`);
      if (this.eventBytes > MAX_EVENT_BYTES) throw new StreamProtocolError(`SSE event larger than ${MAX_EVENT_BYTES} bytes`);
    }
  }
}
