import { describe, expect, it } from 'vitest';
import { natsServers } from '../../../../src/backend/jetstream/nats-link.js';

describe('natsServers (nats_url)', () => {
  it('keeps a single URL as it is', () => {
    expect(natsServers('nats://nats:4222')).toEqual(['nats://nats:4222']);
  });

  it('splits a comma-separated list of cluster servers, trimming blanks and empty entries', () => {
    expect(natsServers(' nats://a:4222, nats://b:4222 ,,nats://c:4222,')).toEqual(['nats://a:4222', 'nats://b:4222', 'nats://c:4222']);
  });

  it('hands over text without any server unchanged, so the connect error names it', () => {
    expect(natsServers(',')).toEqual([',']);
  });
});
