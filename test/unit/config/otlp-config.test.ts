import { afterAll, describe, expect, it } from 'vitest';
import { ConfigLoadError } from '../../../src/config/load.js';
import { ConfigValidationError, validateConfig } from '../../../src/config/validate.js';
import { MINIMAL_YAML, loadDoc, loadYaml, removeSandboxes } from './config-fixture.js';
import { thrownError } from '../../support/thrown-error.js';

afterAll(removeSandboxes);

const MISSING = 'logging.otlp.enabled=true requires logging.otlp.endpoint';

function validationMessage(run: () => unknown): { event: string; message: string } {
  const error = thrownError(run, ConfigValidationError);
  return { event: error.eventName, message: error.message };
}

describe('logging.otlp (docs/design/rules/reference-0.13.md §7)', () => {
  it('defaults to disabled, no endpoint, grpc', () => {
    const config = loadYaml(MINIMAL_YAML);
    expect(config.logging.otlp).toEqual({ enabled: false, protocol: 'grpc' });
    expect(() => validateConfig(config)).not.toThrow();
  });

  it('keeps the other defaults when only otlp is written', () => {
    const config = loadDoc({ logging: { otlp: { enabled: true, endpoint: 'collector:4317' } } });
    expect(config.logging).toEqual({
      level: 'info',
      access_log: 'debug',
      max_buffered_bytes: 16_777_216,
      client_error_lines_per_second: 20,
      otlp: { enabled: true, endpoint: 'collector:4317', protocol: 'grpc' },
    });
  });

  it.each([
    [{ enabled: true }],
    [{ enabled: true, endpoint: '' }],
    [{ enabled: true, endpoint: '   ' }],
    [{ enabled: true, protocol: 'http' }],
  ])('fails startup when enabled without an endpoint: %j', (otlp) => {
    expect(validationMessage(() => validateConfig(loadDoc({ logging: { otlp } })))).toEqual({
      event: 'startup.configuration.validation.failed',
      message: MISSING,
    });
  });

  it('fails before any other semantic check (the log pipeline is built first)', () => {
    const doc = { logging: { otlp: { enabled: true } }, notification_backend: { kind: 'redis' } };
    expect(validationMessage(() => validateConfig(loadDoc(doc))).message).toBe(MISSING);
  });

  it('accepts an endpoint while disabled, and an enabled endpoint with either protocol', () => {
    expect(() => validateConfig(loadDoc({ logging: { otlp: { endpoint: 'x:1' } } }))).not.toThrow();
    expect(() => validateConfig(loadDoc({ logging: { otlp: { enabled: true, endpoint: 'x:1', protocol: 'http' } } }))).not.toThrow();
  });

  it('rejects an unknown protocol at load', () => {
    expect(() => loadDoc({ logging: { otlp: { enabled: true, endpoint: 'x:1', protocol: 'udp' } } })).toThrow(ConfigLoadError);
  });
});

describe('AVISOSERVER_LOGGING__OTLP__* overrides', () => {
  it('sets every field, typed', () => {
    const config = loadYaml(MINIMAL_YAML, {
      AVISOSERVER_LOGGING__OTLP__ENABLED: 'true',
      AVISOSERVER_LOGGING__OTLP__ENDPOINT: 'otel-collector:4318',
      AVISOSERVER_LOGGING__OTLP__PROTOCOL: 'http',
    });
    expect(config.logging.otlp).toStrictEqual({ enabled: true, endpoint: 'otel-collector:4318', protocol: 'http' });
  });

  it('overrides the file', () => {
    const yaml = `${MINIMAL_YAML}logging:\n  otlp:\n    enabled: true\n    endpoint: a:4317\n`;
    const config = loadYaml(yaml, { AVISOSERVER_LOGGING__OTLP__ENABLED: 'false', AVISOSERVER_LOGGING__OTLP__ENDPOINT: 'b:4317' });
    expect(config.logging.otlp).toStrictEqual({ enabled: false, endpoint: 'b:4317', protocol: 'grpc' });
  });

  it('enabled through the environment alone still needs an endpoint', () => {
    const config = loadYaml(MINIMAL_YAML, { AVISOSERVER_LOGGING__OTLP__ENABLED: 'true' });
    expect(validationMessage(() => validateConfig(config)).message).toBe(MISSING);
  });

  it('refuses a protocol outside grpc|http', () => {
    expect(() => loadYaml(MINIMAL_YAML, { AVISOSERVER_LOGGING__OTLP__PROTOCOL: 'HTTP' })).toThrow(ConfigLoadError);
  });
});
