import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { LogLine, RunningServer } from '../../support/server-process.js';
import { http2Client, https1Client } from '../../support/tls-clients.js';
import { TRANSCRIPT_REQUEST, transcriptNotification } from '../../support/transcript.js';

/**
 * What every abuse test checks once its attack is over: the process is alive, printed nothing on
 * stderr (no crash trace, no Node warning), logged no unhandled error, and still serves `/health`
 * and a live watch on connections opened after the attack, over HTTP/2 and HTTP/1.1.
 */

/**
 * Log lines that mean something went wrong inside the server: an unhandled route error, any ERROR
 * or FATAL line other than those of `expectedEvents` (a refused reload is logged as an error).
 */
export function failureLines(server: RunningServer, expectedEvents: readonly string[] = []): LogLine[] {
  return server.logs.filter((line) => {
    const event = String((line.attributes?.['event.name'] as string | undefined) ?? '');
    if (expectedEvents.includes(event)) return false;
    return event === 'http.request.unhandled_error' || line.severityText === 'ERROR' || line.severityText === 'FATAL';
  });
}

export async function expectStillServing(server: RunningServer, ca: Buffer, expectedEvents: readonly string[] = []): Promise<void> {
  expect(server.process.exitCode).toBeNull();
  expect(server.process.signalCode).toBeNull();
  const origin = `https://localhost:${server.port}`;
  const watcher = http2Client(origin, ca);
  const publisher = https1Client(origin, ca);
  try {
    expect((await watcher.request('/health')).status).toBe(200);
    const stream = await watcher.stream('/api/v1/watch', TRANSCRIPT_REQUEST);
    try {
      expect(stream.status).toBe(200);
      expect((await stream.nextSignificant())?.json.type).toBe('connection_established');
      const note = `after-${randomUUID()}`;
      expect((await publisher.request('/api/v1/notification', { body: transcriptNotification(note) })).status).toBe(200);
      const delivered = await stream.nextSignificant();
      expect((delivered?.json.data as { payload?: { note?: string } } | undefined)?.payload?.note).toBe(note);
    } finally {
      stream.close();
    }
  } finally {
    watcher.close();
    publisher.close();
  }
  expect(failureLines(server, expectedEvents)).toEqual([]);
  expect(server.stderr()).toBe('');
}
