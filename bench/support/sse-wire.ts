/**
 * The bytes of an SSE response as the raw-socket reader of the fleet sees them (`raw-sse-stream.ts`):
 * an HTTP/1.1 chunked body undone as it arrives, and SSE frames cut out of the body bytes. Both are
 * incremental (input may be split anywhere) and copy only what a frame leaves unfinished. Lines end
 * with LF alone, as every server the bench measures writes them (aviso, the bare server, Nchan); a
 * server writing CRLF would show as notifications never received, not as wrong ones.
 */

const LF = 0x0a;
const COLON = 0x3a;
const SPACE = 0x20;
const FRAME_END = Buffer.from('\n\n');

/** Undoes `Transfer-Encoding: chunked`, handing each piece of chunk data on in order. */
export class ChunkedDecoder {
  private state: 'size' | 'data' | 'data-end' | 'done' = 'size';
  private sizeLine = '';
  private remaining = 0;

  constructor(private readonly onData: (bytes: Buffer) => void) {}

  /** True once the last (zero-size) chunk arrived: the server ended the response. */
  get done(): boolean {
    return this.state === 'done';
  }

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && this.state !== 'done') {
      if (this.state === 'data') {
        const take = Math.min(this.remaining, chunk.length - at);
        this.onData(chunk.subarray(at, at + take));
        at += take;
        this.remaining -= take;
        if (this.remaining === 0) this.state = 'data-end';
        continue;
      }
      const lf = chunk.indexOf(LF, at);
      if (lf < 0) {
        if (this.state === 'size') this.sizeLine += chunk.toString('latin1', at);
        return;
      }
      if (this.state === 'data-end') {
        // The CRLF after a chunk's data.
        this.state = 'size';
      } else {
        const line = this.sizeLine + chunk.toString('latin1', at, lf);
        this.sizeLine = '';
        const size = Number.parseInt(line.split(';')[0] ?? '', 16);
        if (!Number.isInteger(size) || size < 0) throw new Error(`malformed chunk size line ${JSON.stringify(line)}`);
        // A zero-size chunk ends the body; trailers are not read.
        if (size === 0) this.state = 'done';
        else {
          this.remaining = size;
          this.state = 'data';
        }
      }
      at = lf + 1;
    }
  }
}

export interface SseHandlers {
  /** A frame with data: its `event` (`message` when it names none) and its data lines joined with LF. */
  readonly onEvent: (event: string, data: string) => void;
  /** A frame of comment lines only (`: hi`). */
  readonly onComment: () => void;
}

/** Cuts SSE frames out of body bytes and hands each one on as soon as its blank line arrived. */
export class SseScanner {
  private pending: Buffer | undefined;

  constructor(private readonly handlers: SseHandlers) {}

  push(bytes: Buffer): void {
    const buffer = this.pending === undefined ? bytes : Buffer.concat([this.pending, bytes]);
    let start = 0;
    for (let end = buffer.indexOf(FRAME_END, start); end >= 0; end = buffer.indexOf(FRAME_END, start)) {
      this.frame(buffer, start, end);
      start = end + FRAME_END.length;
    }
    // A copy, so the leftover does not keep the whole read alive.
    this.pending = start < buffer.length ? Buffer.from(buffer.subarray(start)) : undefined;
  }

  /** The frame in `buffer[start, end)`: lines separated by LF. */
  private frame(buffer: Buffer, start: number, end: number): void {
    let event: string | undefined;
    let data: string | undefined;
    let comment = false;
    for (let lineStart = start; lineStart < end;) {
      let lineEnd = buffer.indexOf(LF, lineStart);
      if (lineEnd < 0 || lineEnd > end) lineEnd = end;
      const last = lineEnd;
      if (buffer[lineStart] === COLON) comment = true;
      else if (last > lineStart) {
        let colon = buffer.indexOf(COLON, lineStart);
        if (colon < 0 || colon > last) colon = last;
        const name = buffer.toString('latin1', lineStart, colon);
        let valueStart = Math.min(colon + 1, last);
        if (buffer[valueStart] === SPACE && valueStart < last) valueStart++;
        if (name === 'event') event = buffer.toString('utf8', valueStart, last);
        else if (name === 'data') {
          const value = buffer.toString('utf8', valueStart, last);
          data = data === undefined ? value : `${data}\n${value}`;
        }
      }
      lineStart = lineEnd + 1;
    }
    if (data !== undefined) this.handlers.onEvent(event ?? 'message', data);
    else if (comment) this.handlers.onComment();
  }
}
