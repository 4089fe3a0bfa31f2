import { Agent, request } from 'node:http';

/** POSTs small JSON bodies over a few keep-alive connections; resolves with the status code. */
export class NotifyClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 8 });
  private readonly origin: URL;

  constructor(origin: string) {
    this.origin = new URL(origin);
  }

  post(path: string, body: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          agent: this.agent,
          host: this.origin.hostname,
          port: this.origin.port,
          path,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
