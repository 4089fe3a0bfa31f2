import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MsgHdrsImpl } from '@nats-io/nats-core/internal';
import { headers as natsHeaders } from '@nats-io/transport-node';
import type { StoredNotification } from '../../../../src/backend/backend.js';
import {
  ANNOUNCEMENT_PREFIX,
  announcementsOf,
  fromAnnouncement,
  toAnnouncement,
} from '../../../../src/backend/jetstream/live-announcement.js';
import { TopicDecodeError, decodeTopic, encodeTopic } from '../../../../src/topic/percent-codec.js';

/** The announcement as another process receives it: its header block encoded and decoded again. */
function overTheWire(streamName: string, notification: StoredNotification) {
  const { subject, data, headers } = toAnnouncement(streamName, notification);
  return { subject, data, headers: MsgHdrsImpl.decode((headers as MsgHdrsImpl).encode()) };
}

const notification: StoredNotification = {
  sequence: 42,
  topic: 'mars.od.0001.g.20250706.1200.ens%2Emember%2E7.7',
  payload: '{"note":"prévision ✓"}',
  timestampNs: 1_751_800_000_123_000_000n,
  metadata: { aviso_identifier: '{"class":"od","date":"20250706"}', spatial_bbox: '1.0,2.0,3.0,4.0' },
};

describe('live announcements', () => {
  it('carry a notification to another process as the stream stores it: topic, payload, metadata, sequence, time', () => {
    const received = fromAnnouncement('MARS', overTheWire('MARS', notification));
    expect(received).toEqual(notification);
  });

  it('carry a bare-base topic and a notification without metadata', () => {
    const bare = { sequence: 1, topic: 'mars', payload: 'null', timestampNs: 5n };
    expect(fromAnnouncement('MARS', overTheWire('MARS', bare))).toEqual(bare);
  });

  it('replace line breaks in metadata values with spaces, as the stream message does', () => {
    const multiline = { ...notification, metadata: { spatial_geometry: 'POLYGON((1 2,\r\n3 4))' } };
    expect(fromAnnouncement('MARS', overTheWire('MARS', multiline))?.metadata).toEqual({ spatial_geometry: 'POLYGON((1 2,  3 4))' });
  });

  it("are published under the stream's subject, which a feed subscribes to", () => {
    const { subject } = toAnnouncement('MARS', notification);
    expect(subject).toBe(`${ANNOUNCEMENT_PREFIX}.MARS.${notification.topic}`);
    expect(announcementsOf('MARS')).toBe(`${ANNOUNCEMENT_PREFIX}.MARS.>`);
  });

  it('ignore a message on the subject that is not an announcement of this stream', () => {
    const valid = overTheWire('MARS', notification);
    expect(fromAnnouncement('DISS', valid)).toBeUndefined();
    expect(fromAnnouncement('MARS', { ...valid, headers: undefined })).toBeUndefined();
    for (const [sequence, time] of [
      ['', '1'],
      ['0', '1'],
      ['-3', '1'],
      ['1.5', '1'],
      ['x', '1'],
      ['7', ''],
      ['7', '-1'],
      ['7', '1e3'],
    ]) {
      const headers = natsHeaders();
      headers.set('Aviso-Live-Sequence', sequence as string);
      headers.set('Aviso-Live-Timestamp-Ns', time as string);
      expect(fromAnnouncement('MARS', { ...valid, headers }), `${sequence} / ${time}`).toBeUndefined();
    }
  });

  it('use a subject no topic can have, and that no topic pattern can decode', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 4 }), (tokens) => {
        expect(encodeTopic(tokens).startsWith(ANNOUNCEMENT_PREFIX)).toBe(false);
      }),
      { numRuns: 500 },
    );
    expect(() => decodeTopic(toAnnouncement('MARS', notification).subject)).toThrow(TopicDecodeError);
  });
});
