import { describe, expect, it } from 'vitest';
import { redactText, redactValue } from '../../../src/logging/redact.js';

describe('redactValue (docs/design/rules/operations.md §3.4.1)', () => {
  it('replaces the values of secret-looking keys at any depth', () => {
    expect(
      redactValue({
        auth: { jwt_secret: 's3', enabled: true },
        ecpds: { password: 'p', username: 'svc' },
        headers: { Authorization: 'Basic abc' },
        nested: [{ api_key: 'k', access_token: 't' }],
      }),
    ).toEqual({
      auth: { jwt_secret: '[REDACTED]', enabled: true },
      ecpds: { password: '[REDACTED]', username: 'svc' },
      headers: { Authorization: '[REDACTED]' },
      nested: [{ api_key: '[REDACTED]', access_token: '[REDACTED]' }],
    });
  });

  it('removes user info from URLs in any string', () => {
    expect(redactValue({ url: 'nats://user:pass@nats:4222' })).toEqual({ url: 'nats://[REDACTED]@nats:4222' });
  });
});

describe('redactText', () => {
  it.each([
    ['connect failed: password=hunter2 rejected', 'connect failed: password=[REDACTED] rejected'],
    ['TOKEN: abc123', 'TOKEN: [REDACTED]'],
    ['header Bearer eyJhbGciOi.x.y sent', 'header Bearer [REDACTED] sent'],
    ['https://a:b@example.org/x', 'https://[REDACTED]@example.org/x'],
  ])('redacts %j', (input, output) => {
    expect(redactText(input)).toBe(output);
  });

  it('leaves ordinary messages alone', () => {
    expect(redactText('Invalid or expired token')).toBe('Invalid or expired token');
  });
});
