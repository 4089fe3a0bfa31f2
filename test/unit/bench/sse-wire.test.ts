import { createParser } from 'eventsource-parser';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkedDecoder, SseScanner } from '../../../bench/support/sse-wire.js';

/** Feeds `bytes` in the pieces that `cuts` (sorted offsets) make. */
function inPieces(bytes: Buffer, cuts: readonly number[], push: (piece: Buffer) => void): void {
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    push(bytes.subarray(from, cut));
    from = cut;
  }
}

function chunked(pieces: readonly string[]): Buffer {
  const body = pieces.map((piece) => `${Buffer.byteLength(piece).toString(16)}\r\n${piece}\r\n`).join('');
  return Buffer.from(`${body}0\r\n\r\n`);
}

type Seen = ['event', string, string] | ['comment'];

function scanned(bytes: Buffer, cuts: readonly number[]): Seen[] {
  const seen: Seen[] = [];
  const scanner = new SseScanner({ onEvent: (event, data) => seen.push(['event', event, data]), onComment: () => seen.push(['comment']) });
  inPieces(bytes, cuts, (piece) => scanner.push(piece));
  return seen;
}

/** What eventsource-parser makes of the same text: a comment-only frame counted once. */
function byLibrary(text: string): Seen[] {
  const seen: Seen[] = [];
  let commentPending: boolean;
  let eventsInFrame: number;
  const parser = createParser({
    onEvent: (message) => {
      eventsInFrame++;
      seen.push(['event', message.event ?? 'message', message.data]);
    },
    onComment: () => (commentPending = true),
  });
  for (const frame of text.split('\n\n').slice(0, -1)) {
    eventsInFrame = 0;
    commentPending = false;
    parser.feed(`${frame}\n\n`);
    if (eventsInFrame === 0 && commentPending) seen.push(['comment']);
  }
  return seen;
}

const cutsOf = (length: number): fc.Arbitrary<number[]> =>
  fc
    .uniqueArray(fc.integer({ min: 1, max: Math.max(1, length - 1) }), { maxLength: 8 })
    .map((cuts) => cuts.filter((cut) => cut < length).sort((a, b) => a - b));

describe('ChunkedDecoder', () => {
  it('hands on the chunks’ data in order and ends at the zero-size chunk, however the bytes are split', () => {
    fc.assert(
      fc.property(
        fc
          .array(fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }), { maxLength: 6 })
          .chain((pieces) => cutsOf(chunked(pieces).length).map((cuts) => ({ pieces, cuts }))),
        ({ pieces, cuts }) => {
          const out: Buffer[] = [];
          const decoder = new ChunkedDecoder((bytes) => out.push(Buffer.from(bytes)));
          inPieces(chunked(pieces), cuts, (piece) => decoder.push(piece));
          expect(Buffer.concat(out).toString('utf8')).toBe(pieces.join(''));
          expect(decoder.done).toBe(true);
        },
      ),
    );
  });

  it('ignores chunk extensions and is not done before the last chunk', () => {
    const out: string[] = [];
    const decoder = new ChunkedDecoder((bytes) => out.push(bytes.toString()));
    decoder.push(Buffer.from('5;name=value\r\nhello\r\n'));
    expect(decoder.done).toBe(false);
    decoder.push(Buffer.from('0\r\n\r\n'));
    expect(out.join('')).toBe('hello');
    expect(decoder.done).toBe(true);
  });

  it('refuses a size line that is not hexadecimal', () => {
    const decoder = new ChunkedDecoder(() => {});
    expect(() => decoder.push(Buffer.from('zz\r\n'))).toThrow(/malformed chunk size/);
  });
});

describe('SseScanner', () => {
  it('reads the frames the servers write: an opening comment, named events, several data lines', () => {
    const text = ': hi\n\nevent: live-notification\nid: 1:0\ndata: {"a":1}\n\ndata: one\ndata:two\n\nevent: heartbeat\n\n';
    expect(scanned(Buffer.from(text), [])).toEqual([
      ['comment'],
      ['event', 'live-notification', '{"a":1}'],
      ['event', 'message', 'one\ntwo'],
    ]);
  });

  it('gives what eventsource-parser gives for LF-separated frames, however the bytes are split', () => {
    const line = fc.oneof(
      fc.constantFrom(': hi', 'event: live-notification', 'event:heartbeat', 'data:', 'data', 'id: 7', 'retry: 10'),
      fc.string({ unit: fc.constantFrom('a', 'é', '{', '"', ':', ' ', '1') }).map((value) => `data: ${value}`),
    );
    const frames = fc.array(
      fc.array(line, { minLength: 1, maxLength: 4 }).map((lines) => `${lines.join('\n')}\n\n`),
      { maxLength: 6 },
    );
    fc.assert(
      fc.property(
        frames.chain((parts) => {
          const text = parts.join('');
          return cutsOf(Buffer.byteLength(text)).map((cuts) => ({ text, cuts }));
        }),
        ({ text, cuts }) => {
          expect(scanned(Buffer.from(text), cuts)).toEqual(byLibrary(text));
        },
      ),
    );
  });

  it('keeps an unfinished frame until its blank line arrives', () => {
    const seen: string[] = [];
    const scanner = new SseScanner({ onEvent: (_event, data) => seen.push(data), onComment: () => {} });
    scanner.push(Buffer.from('data: first\n\ndata: sec'));
    expect(seen).toEqual(['first']);
    scanner.push(Buffer.from('ond\n'));
    expect(seen).toEqual(['first']);
    scanner.push(Buffer.from('\n'));
    expect(seen).toEqual(['first', 'second']);
  });
});
