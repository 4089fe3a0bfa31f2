import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { forEachLine } from '../../../src/runtime/worker-output.js';

function lines(chunks: readonly string[]): Promise<string[]> {
  const stream = new PassThrough();
  const seen: string[] = [];
  forEachLine(stream, (line) => seen.push(line));
  const ended = new Promise<string[]>((resolve) => stream.on('end', () => resolve(seen)));
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  stream.resume();
  return ended;
}

describe('forEachLine (a worker output forwarded by its primary, D36)', () => {
  it('hands over whole lines however the chunks cut them', async () => {
    expect(await lines(['{"a":', '1}\n{"b"', ':2}\n', '{"c":3}\n{"d":4}\n'])).toEqual(['{"a":1}', '{"b":2}', '{"c":3}', '{"d":4}']);
  });

  it('keeps empty lines and a last line without its newline', async () => {
    expect(await lines(['one\n\ntw', 'o'])).toEqual(['one', '', 'two']);
  });

  it('keeps a multi-byte character cut between two chunks', async () => {
    const bytes = Buffer.from('é\n');
    const stream = new PassThrough();
    const seen: string[] = [];
    forEachLine(stream, (line) => seen.push(line));
    stream.write(bytes.subarray(0, 1));
    stream.end(bytes.subarray(1));
    stream.resume();
    await new Promise((resolve) => stream.on('end', resolve));
    expect(seen).toEqual(['é']);
  });
});
