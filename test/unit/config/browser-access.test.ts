import { afterAll, describe, expect, it } from 'vitest';
import { ConfigValidationError, validateConfig } from '../../../src/config/validate.js';
import { loadDoc, removeSandboxes, type Doc } from './config-fixture.js';
import { thrownError } from '../../support/thrown-error.js';

afterAll(removeSandboxes);

const CONFIGURATION = 'startup.configuration.validation.failed';

function failure(patch: Doc): { event: string; message: string } {
  const error = thrownError(() => validateConfig(loadDoc(patch)), ConfigValidationError);
  return { event: error.eventName, message: error.message };
}

const origins = (...allowed: string[]): Doc => ({ application: { cors: { allowed_origins: allowed } } });

describe('application.cors.allowed_origins (docs/design/rules/browser.md §2)', () => {
  it('is empty by default', () => {
    expect(loadDoc({}).application.cors).toEqual({ allowed_origins: [] });
  });

  it.each([
    ['https://console.example.org'],
    ['http://localhost:5173'],
    ['http://127.0.0.1:8080'],
    ['http://[::1]:3000'],
    ['*'],
    ['*', 'https://a.example'],
  ])('accepts %j', (...allowed) => {
    expect(() => validateConfig(loadDoc(origins(...allowed)))).not.toThrow();
  });

  it.each([
    ['https://console.example.org/', 'https://console.example.org'],
    ['https://Console.Example.org', 'https://console.example.org'],
    ['https://console.example.org:443', 'https://console.example.org'],
    ['http://localhost:80', 'http://localhost'],
  ])('refuses %j and names the form a browser sends (%s)', (origin, canonical) => {
    expect(failure(origins('https://ok.example', origin))).toEqual({
      event: CONFIGURATION,
      message: `application.cors.allowed_origins[1]: ${JSON.stringify(origin)} is not an origin as browsers send it: write ${JSON.stringify(canonical)}`,
    });
  });

  it.each([
    'console.example.org',
    'ftp://files.example',
    'https://x.example/path',
    'https://u:p@x.example',
    'https://x.example?q',
    '*.example.org',
    '',
    'null',
    'https://x .example',
  ])('refuses %j as no origin at all', (origin) => {
    expect(failure(origins(origin))).toEqual({
      event: CONFIGURATION,
      message: `application.cors.allowed_origins[0]: ${JSON.stringify(origin)} is not an origin: write scheme://host[:port] with http or https and no path, or "*"`,
    });
  });
});

describe('application.tls (docs/design/rules/browser.md §3)', () => {
  it('is absent by default: plain HTTP', () => {
    expect(loadDoc({}).application.tls).toBeUndefined();
  });

  it('names a blank file field', () => {
    expect(failure({ application: { tls: { cert_file: '', key_file: 'k.pem' } } }).message).toBe(
      'application.tls.cert_file: must not be blank',
    );
    expect(failure({ application: { tls: { cert_file: 'c.pem', key_file: ' ' } } }).message).toBe(
      'application.tls.key_file: must not be blank',
    );
    expect(failure({ application: { tls: { cert_file: 'c.pem', key_file: 'k.pem', ca_file: '' } } }).message).toBe(
      'application.tls.ca_file: must not be blank when set',
    );
  });
});

describe('application.additional_origins (D46)', () => {
  const additional = (...origins: string[]): Doc => ({ application: { additional_origins: origins } });

  it('is empty by default', () => {
    expect(loadDoc({}).application.additional_origins).toEqual([]);
  });

  it.each([['https://aviso.example.org'], ['http://localhost:8080'], ['http://[::1]:3000'], ['https://a.example', 'http://10.0.0.5:8000']])(
    'accepts %j',
    (...origins) => {
      expect(() => validateConfig(loadDoc(additional(...origins)))).not.toThrow();
    },
  );

  it.each([
    ['https://aviso.example.org/', 'https://aviso.example.org'],
    ['HTTPS://Aviso.Example.org', 'https://aviso.example.org'],
    ['https://aviso.example.org:443', 'https://aviso.example.org'],
  ])('refuses %j and names the form a browser sends (%s)', (origin, canonical) => {
    expect(failure(additional('https://ok.example', origin))).toEqual({
      event: CONFIGURATION,
      message: `application.additional_origins[1]: ${JSON.stringify(origin)} is not an origin as browsers send it: write ${JSON.stringify(canonical)}`,
    });
  });

  it.each(['*', 'aviso.example.org', 'https://aviso.example.org/console', 'null', ''])(
    'refuses %j as no origin at all, "*" included',
    (origin) => {
      expect(failure(additional(origin))).toEqual({
        event: CONFIGURATION,
        message: `application.additional_origins[0]: ${JSON.stringify(origin)} is not an origin: write scheme://host[:port] with http or https and no path`,
      });
    },
  );
});
