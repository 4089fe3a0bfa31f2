import type { Readable } from 'node:stream';

/**
 * Calls `onLine` with each complete line `stream` carries (without its `\n`), and with a last
 * line that lacks one when the stream ends. The primary of several workers (D36) reads each
 * worker's stdout and stderr this way and writes whole lines itself: several processes writing
 * to one pipe could interleave a long line (the configuration dump) with another process's.
 */
export function forEachLine(stream: Readable, onLine: (line: string) => void): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    let start = 0;
    for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n', start)) {
      onLine(pending.slice(start, newline));
      start = newline + 1;
    }
    pending = pending.slice(start);
  });
  stream.on('end', () => {
    if (pending !== '') onLine(pending);
    pending = '';
  });
}
