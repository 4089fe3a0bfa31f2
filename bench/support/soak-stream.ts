import { Agent, request, type ClientRequest, type IncomingMessage } from 'node:http';
import { createParser } from 'eventsource-parser';

/**
 * One watch or replay stream of the soak run: node:http on its own socket, frames parsed with
 * eventsource-parser and only counted, and the socket under the run's control (`pause`/`resume`
 * for slow readers, `close` when the client leaves on purpose). It records how the stream ended
 * so the run can tell an expected end (the client left, a replay completed, a slow reader was
 * told `end_of_stream` with the cause `slow_consumer`, D32) from an unexpected one.
 */

const OWN_SOCKET = new Agent({ keepAlive: false, maxSockets: Infinity });
const ID_PATTERN = /"id":"[^"@]*@(\d+)"/;

export class SoakStream {
  status = 0;
  notifications = 0;
  /** Notifications whose sequence did not ascend. */
  outOfOrder = 0;
  lastSequence = 0;
  errorFrames = 0;
  closeReason: string | undefined;
  /** `cause` of the close frame: `slow_consumer` for a reader that did not keep up (D32). */
  closeCause: string | undefined;
  transportError: string | undefined;
  /** True once the client closed the stream itself. */
  closedByClient = false;
  private ended = false;
  private readonly request: ClientRequest;
  private response: IncomingMessage | undefined;
  private readonly end: Promise<void>;

  constructor(origin: URL, path: '/api/v1/watch' | '/api/v1/replay', body: string) {
    let resolveEnd!: () => void;
    this.end = new Promise((resolve) => (resolveEnd = resolve));
    const finish = (error?: Error): void => {
      if (this.ended) return;
      this.ended = true;
      if (error && !this.closedByClient) this.transportError = error.message;
      resolveEnd();
    };
    const parser = createParser({
      onEvent: (message) => {
        switch (message.event) {
          case 'live-notification':
          case 'replay': {
            const sequence = Number(ID_PATTERN.exec(message.data)?.[1] ?? Number.NaN);
            if (Number.isNaN(sequence)) return; // a control frame (connection_established)
            this.notifications++;
            if (!(sequence > this.lastSequence)) this.outOfOrder++;
            this.lastSequence = sequence;
            return;
          }
          case 'connection-closing':
            this.closeReason = /"reason":"([^"]*)"/.exec(message.data)?.[1] ?? 'unreadable';
            this.closeCause = /"cause":"([^"]*)"/.exec(message.data)?.[1];
            return;
          case 'error':
            this.errorFrames++;
            return;
          default:
            return;
        }
      },
    });
    this.request = request(
      {
        agent: OWN_SOCKET,
        host: origin.hostname,
        port: origin.port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        this.response = response;
        this.status = response.statusCode ?? 0;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => parser.feed(chunk));
        response.on('end', () => finish());
        response.on('error', (error) => finish(error));
        response.on('close', () => finish());
      },
    );
    this.request.on('error', (error) => finish(error));
    this.request.end(body);
  }

  get hasEnded(): boolean {
    return this.ended;
  }

  closed(): Promise<void> {
    return this.end;
  }

  pause(): void {
    this.response?.pause();
  }

  resume(): void {
    this.response?.resume();
  }

  /** The client leaves on purpose. */
  close(): void {
    if (this.ended) return;
    this.closedByClient = true;
    this.request.destroy();
  }
}
