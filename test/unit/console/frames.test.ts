import { describe, expect, it } from 'vitest';
import { classifyFrame, formatJson } from '../../../console/src/frames.js';
import { describeHttpError, describeResponse } from '../../../console/src/http-error.js';

const RID = '0b9f1a8e-2f4c-4d0e-9a51-7c1e5b2d3f40';

describe('frame classification', () => {
  it('tells notifications (live and replayed) from the opening frame of a live watch', () => {
    const event = JSON.stringify({ id: 'mars@4', type: 'int.ecmwf.aviso.mars', data: {} });
    expect(classifyFrame('live-notification', event)).toMatchObject({ kind: 'notification', label: 'live', summary: 'mars@4' });
    expect(classifyFrame('replay', event)).toMatchObject({ kind: 'notification', label: 'replay', summary: 'mars@4' });
    const opening = JSON.stringify({
      type: 'connection_established',
      connection_will_close_in_seconds: 3600,
      request_id: RID,
      topic: 'mars.*',
    });
    expect(classifyFrame('live-notification', opening)).toEqual({
      kind: 'lifecycle',
      label: 'opening',
      summary: 'topic mars.*, closes in 3600 s',
      data: JSON.parse(opening),
      requestId: RID,
    });
  });

  it('names the replay control frames', () => {
    const started = JSON.stringify({
      type: 'replay_started',
      batch_size: 100,
      end_sequence: 7,
      from_sequence: 3,
      from_date: null,
      request_id: RID,
      to_date: null,
    });
    expect(classifyFrame('replay-control', started)).toMatchObject({
      kind: 'lifecycle',
      label: 'replay started',
      summary: 'from #3 to #7, batches of 100',
      requestId: RID,
    });
    expect(classifyFrame('replay-control', '{"type":"replay_completed"}')).toMatchObject({ kind: 'lifecycle', label: 'replay completed' });
    expect(
      classifyFrame('replay-control', '{"max_allowed":3,"message":"Replay limit reached","type":"notification_replay_limit_reached"}'),
    ).toMatchObject({ kind: 'lifecycle', label: 'limit reached', summary: 'Replay limit reached (max 3)' });
  });

  it('shows heartbeats, errors and the close with its reason and cause', () => {
    expect(classifyFrame('heartbeat', '{"timestamp":"2026-03-01T12:00:00Z","topic":"mars.*"}')).toMatchObject({
      kind: 'heartbeat',
      summary: '2026-03-01T12:00:00Z',
    });
    expect(
      classifyFrame(
        'connection-closing',
        JSON.stringify({
          cause: 'slow_consumer',
          message: 'Client did not keep up with the stream',
          reason: 'end_of_stream',
          request_id: RID,
        }),
      ),
    ).toMatchObject({
      kind: 'close',
      summary: 'end_of_stream (cause slow_consumer): Client did not keep up with the stream',
      requestId: RID,
    });
    expect(classifyFrame('connection-closing', '{"message":"Stream completed","reason":"end_of_stream"}').summary).toBe(
      'end_of_stream: Stream completed',
    );
    expect(classifyFrame('error', '{"error":"stream_processing_failed","message":"boom"}')).toMatchObject({
      kind: 'error',
      summary: 'stream_processing_failed: boom',
    });
  });

  it('keeps data that is not JSON as text', () => {
    expect(classifyFrame('something-new', 'hello')).toMatchObject({ kind: 'lifecycle', label: 'something-new', data: 'hello' });
  });
});

describe('server errors shown in place', () => {
  it('takes the code, message and request id of an error body', () => {
    const body = JSON.stringify({
      code: 'INVALID_WATCH_REQUEST',
      error: 'Invalid Watch Request',
      message: "Required field 'class' missing for watch operation",
      request_id: RID,
    });
    expect(describeHttpError(400, body, null)).toEqual({
      status: 400,
      title: '400 INVALID_WATCH_REQUEST',
      message: "Required field 'class' missing for watch operation",
      requestId: RID,
    });
  });

  it('falls back to the X-Request-ID header and the raw text', () => {
    expect(describeHttpError(502, '<h1>Bad gateway</h1>', RID)).toEqual({
      status: 502,
      title: '502',
      message: '<h1>Bad gateway</h1>',
      requestId: RID,
    });
    expect(describeHttpError(503, '', null).message).toBe('The server gave no reason');
  });

  it("reads a fetch Response's status and X-Request-ID header", () => {
    const response = new Response(null, { status: 502, headers: { 'X-Request-ID': RID } });
    expect(describeResponse(response, '<h1>Bad gateway</h1>')).toEqual({
      status: 502,
      title: '502',
      message: '<h1>Bad gateway</h1>',
      requestId: RID,
    });
  });
});

describe('the JSON view', () => {
  it('indents objects and keeps scalar arrays and coordinate pairs on one line', () => {
    const event = {
      data: {
        identifier: {
          polygon: [
            [50, 10],
            [52, 10],
            [50, 10],
          ],
          tags: ['a', 'b'],
        },
        payload: null,
      },
      id: 'x@1',
      empty: {},
    };
    expect(formatJson(event)).toBe(
      [
        '{',
        '  "data": {',
        '    "identifier": {',
        '      "polygon": [[50,10],[52,10],[50,10]],',
        '      "tags": ["a","b"]',
        '    },',
        '    "payload": null',
        '  },',
        '  "id": "x@1",',
        '  "empty": {}',
        '}',
      ].join('\n'),
    );
    expect(JSON.parse(formatJson(event))).toEqual(event);
    expect(formatJson([{ a: 1 }])).toBe('[\n  {\n    "a": 1\n  }\n]');
    expect(formatJson('text')).toBe('"text"');
  });
});
