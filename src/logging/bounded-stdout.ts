import { pino } from 'pino';

/** The stdout writer pino builds (sonic-boom), asynchronous. */
export type StdoutWriter = ReturnType<typeof pino.destination>;

/**
 * stdout with a bound on what it holds (D45, `logging.max_buffered_bytes`). pino hands each line
 * to sonic-boom, which writes in the background and keeps what its reader has not taken yet; with
 * no bound a reader slower than the server (a log shipper behind, a pipe read at 1 MB/s) lets
 * that grow until the process runs out of memory. Past the bound sonic-boom drops the write (a
 * whole line, or whole forwarded lines of a worker) and says so; each dropped line is counted.
 */
export function createBoundedStdout(maxBufferedBytes: number | undefined, fd = 1): { stream: StdoutWriter; droppedLines: () => number } {
  const stream = pino.destination({ dest: fd, sync: false, ...(maxBufferedBytes === undefined ? {} : { maxLength: maxBufferedBytes }) });
  let dropped = 0;
  stream.on('drop', (data: string | Buffer) => {
    dropped += linesIn(data);
  });
  return { stream, droppedLines: () => dropped };
}

function linesIn(data: string | Buffer): number {
  const text = typeof data === 'string' ? data : data.toString('utf8');
  let lines = 0;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) lines++;
  // A write without its newline is still one line lost.
  return text.endsWith('\n') || text.length === 0 ? lines : lines + 1;
}
