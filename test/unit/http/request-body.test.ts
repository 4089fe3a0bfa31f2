import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/http/routes/api-error.js';
import { parseNotificationRequest } from '../../../src/http/routes/request-body.js';

function failure(body: string, endpoint: 'notify' | 'watch' | 'replay' = 'notify'): Record<string, unknown> {
  try {
    parseNotificationRequest(endpoint, body);
  } catch (error) {
    if (error instanceof ApiError) return { status: error.statusCode, ...error.body };
    throw error;
  }
  throw new Error('expected a failure');
}

describe('parseNotificationRequest', () => {
  it('accepts the five fields and treats null cursors and payload as absent', () => {
    expect(
      parseNotificationRequest('watch', '{"event_type":"mars","identifier":{},"from_id":null,"from_date":null,"payload":null}'),
    ).toEqual({ event_type: 'mars', identifier: {} });
  });

  it('keeps string cursors and any payload', () => {
    const parsed = parseNotificationRequest('watch', '{"event_type":"","identifier":{"a":1},"from_id":"5","payload":[1]}');
    expect(parsed.event_type).toBe('');
    expect(parsed.from_id).toBe('5');
    expect(parsed.payload).toHaveLength(1);
  });

  it.each(['', 'not json', '{"event_type":"mars"} x', '{'])('answers INVALID_JSON for %j', (body) => {
    const error = failure(body);
    expect(error).toMatchObject({ status: 400, code: 'INVALID_JSON', error: 'Invalid Notification Request' });
    expect(error.message).toMatch(/^JSON parsing failed: /);
    expect(error.details).toBe(error.message);
  });

  it('reports the alphabetically first unknown field with the exact text', () => {
    expect(failure('{"event_type":"mars","identifier":{},"zeta":1,"alpha":2}', 'watch')).toMatchObject({
      code: 'UNKNOWN_FIELD',
      error: 'Invalid Watch Request',
      message:
        'Request contains unknown fields: Unknown field \'alpha\' in request. Allowed fields: ["event_type", "identifier", "from_id", "from_date", "to_id", "to_date", "payload"]',
    });
  });

  it('checks unknown fields before the shape', () => {
    expect(failure('{"identifier":5,"bogus":1}')).toMatchObject({ code: 'UNKNOWN_FIELD' });
  });

  it.each([
    ['{"identifier":{}}', 'missing field `event_type`'],
    ['{"event_type":"mars"}', 'missing field `identifier`'],
    ['{"event_type":5,"identifier":{}}', 'invalid type: integer `5`, expected a string'],
    ['{"event_type":"mars","identifier":null}', 'invalid type: null, expected a map'],
    ['{"event_type":"mars","identifier":[]}', 'invalid type: sequence, expected a map'],
    ['{"event_type":"mars","identifier":{},"from_id":5}', 'invalid type: integer `5`, expected a string'],
    ['[1]', 'invalid type: sequence, expected struct NotificationRequest'],
    ['"mars"', 'invalid type: string "mars", expected struct NotificationRequest'],
  ])('answers INVALID_REQUEST_SHAPE for %s', (body, diagnostic) => {
    const error = failure(body, 'replay');
    expect(error).toMatchObject({ status: 400, code: 'INVALID_REQUEST_SHAPE', error: 'Invalid Replay Request' });
    expect(error.message).toMatch(/^Request deserialization failed: /);
    expect(error.message).toContain(diagnostic);
  });
});
