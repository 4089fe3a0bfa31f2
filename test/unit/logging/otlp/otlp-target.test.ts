import { describe, expect, it } from 'vitest';
import { OTLP_MISSING_ENDPOINT, otlpExportUrl, otlpTarget } from '../../../../src/logging/otlp/otlp-target.js';

describe('otlpExportUrl', () => {
  it.each([
    ['collector:4317', 'grpc', 'http://collector:4317'],
    ['https://collector:4317', 'grpc', 'https://collector:4317'],
    ['http://collector:4317/', 'grpc', 'http://collector:4317/'],
    ['collector:4318', 'http', 'http://collector:4318/v1/logs'],
    ['http://collector:4318/', 'http', 'http://collector:4318/v1/logs'],
    ['https://otel.example/ingest', 'http', 'https://otel.example/ingest/v1/logs'],
    ['http://collector:4318/v1/logs', 'http', 'http://collector:4318/v1/logs'],
    ['http://collector:4318/v1/logs/', 'http', 'http://collector:4318/v1/logs'],
  ] as const)('%s over %s → %s', (endpoint, protocol, url) => {
    expect(otlpExportUrl(endpoint, protocol)).toBe(url);
  });
});

describe('otlpTarget', () => {
  it('is undefined while disabled, whatever the endpoint', () => {
    expect(otlpTarget({ enabled: false, protocol: 'grpc' })).toBeUndefined();
    expect(otlpTarget({ enabled: false, endpoint: 'x:1', protocol: 'http' })).toBeUndefined();
  });

  it('trims the endpoint before normalising it', () => {
    expect(otlpTarget({ enabled: true, endpoint: '  collector:4318 ', protocol: 'http' })).toEqual({
      protocol: 'http',
      url: 'http://collector:4318/v1/logs',
    });
  });

  it('throws the exact message without an endpoint', () => {
    expect(() => otlpTarget({ enabled: true, protocol: 'grpc' })).toThrow(OTLP_MISSING_ENDPOINT);
    expect(OTLP_MISSING_ENDPOINT).toBe('logging.otlp.enabled=true requires logging.otlp.endpoint');
  });
});
