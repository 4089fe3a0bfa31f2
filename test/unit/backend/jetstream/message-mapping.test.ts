import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MsgHdrsImpl } from '@nats-io/nats-core/internal';
import { metadataFromHeaderBytes } from '../../../../src/backend/jetstream/message-mapping.js';
import { parseAckSubject } from '../../../../src/backend/jetstream/pull-no-wait.js';

const encoder = new TextEncoder();

/** The definition: nats-core's own header decode, then the metadata rule of docs/design/rules/backends.md §7.7. */
function viaNatsCore(text: string): Record<string, string> | undefined | 'throws' {
  let headers: MsgHdrsImpl;
  try {
    headers = MsgHdrsImpl.decode(encoder.encode(text));
  } catch {
    return 'throws';
  }
  const metadata: Record<string, string> = {};
  for (const key of headers.keys()) {
    if (key.toLowerCase().startsWith('nats-')) continue;
    metadata[key] = headers.values(key).join(',');
  }
  return Object.keys(metadata).length > 0 ? metadata : undefined;
}

describe('metadataFromHeaderBytes', () => {
  it('reads a header block as nats-core does, or leaves it to nats-core', () => {
    const name = fc.oneof(
      fc.constantFrom('aviso_identifier', 'Nats-Msg-Id', 'NATS-x', 'spatial_geometry', 'dup', 'Dup', '__proto__', '', 'toString', '1'),
      fc.string({ unit: fc.constantFrom('a', 'B', '-', ' ', ':', '\r', '\n', 'é', '_') }),
    );
    const value = fc.string({ unit: fc.constantFrom('x', ' ', '\t', ':', ',', '{', '"', '\r', '\n', 'é') });
    const line = fc.oneof(
      fc.tuple(name, value).map(([k, v]) => `${k}:${v}`),
      fc.tuple(name, value).map(([k, v]) => `${k}: ${v}`),
      value,
    );
    const first = fc.constantFrom('NATS/1.0', 'NATS/1.0 503', 'NATS/1.0 404 No Messages', 'NATS/1.0x', 'NATS/1.');
    fc.assert(
      fc.property(first, fc.array(line, { maxLength: 6 }), fc.boolean(), (head, lines, closed) => {
        const text = [head, ...lines].join('\r\n') + (closed ? '\r\n\r\n' : '');
        const fast = metadataFromHeaderBytes(encoder.encode(text));
        if (typeof fast === 'symbol') return; // left to nats-core, which then decides
        expect(fast).toStrictEqual(viaNatsCore(text));
      }),
      { numRuns: 3000 },
    );
  });

  it('reads the headers aviso-ts writes, and no headers as no metadata', () => {
    const text = 'NATS/1.0\r\nNats-Msg-Id: abc\r\naviso_identifier: {"class":"od"}\r\nx: 1\r\nx: 2\r\n\r\n';
    expect(metadataFromHeaderBytes(encoder.encode(text))).toStrictEqual({ aviso_identifier: '{"class":"od"}', x: '1,2' });
    expect(metadataFromHeaderBytes(null)).toBeUndefined();
    expect(metadataFromHeaderBytes(encoder.encode('NATS/1.0\r\nNats-Msg-Id: abc\r\n\r\n'))).toBeUndefined();
  });

  it('leaves status lines and names nats-core refuses to nats-core', () => {
    expect(typeof metadataFromHeaderBytes(encoder.encode('NATS/1.0 404 No Messages\r\n\r\n'))).toBe('symbol');
    expect(typeof metadataFromHeaderBytes(encoder.encode('NATS/1.0\r\nbad name: x\r\n\r\n'))).toBe('symbol');
  });
});

/** The definition before token positions: `split`. */
function viaSplit(reply: string): { streamSequence: number; timestampNanos: bigint } | 'throws' {
  const tokens = reply.split('.');
  if (tokens[0] !== '$JS' || tokens[1] !== 'ACK' || (tokens.length !== 9 && tokens.length < 11)) return 'throws';
  const offset = tokens.length === 9 ? 0 : 2;
  try {
    return { streamSequence: Number(tokens[5 + offset]), timestampNanos: BigInt(tokens[7 + offset] as string) };
  } catch {
    return 'throws';
  }
}

describe('parseAckSubject', () => {
  it('reads both reply forms as splitting on dots does', () => {
    const token = fc.oneof(fc.constantFrom('$JS', 'ACK', '', '12', '1796159866292000000', 'x'), fc.nat().map(String));
    const reply = fc.oneof(
      fc.array(token, { maxLength: 16 }).map((tokens) => tokens.join('.')),
      fc.array(token, { maxLength: 14 }).map((tokens) => ['$JS', 'ACK', ...tokens].join('.')),
    );
    fc.assert(
      fc.property(reply, (text) => {
        let actual: ReturnType<typeof viaSplit>;
        try {
          actual = parseAckSubject(text);
        } catch {
          actual = 'throws';
        }
        expect(actual).toStrictEqual(viaSplit(text));
      }),
      { numRuns: 3000 },
    );
    expect(parseAckSubject('$JS.ACK.s.c.1.42.7.1700000000000000001.0')).toStrictEqual({
      streamSequence: 42,
      timestampNanos: 1700000000000000001n,
    });
    expect(parseAckSubject('$JS.ACK.dom.hash.s.c.1.43.7.1700000000000000002.0.rnd')).toStrictEqual({
      streamSequence: 43,
      timestampNanos: 1700000000000000002n,
    });
  });
});
