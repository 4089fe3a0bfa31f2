import { describe, expect, it } from 'vitest';
import { ownOrigins, type OwnOriginSettings } from '../../../src/config/own-origins.js';

/** D46: the server's own origins come from the configuration, never from the request's Host. */
function originsOf(settings: Partial<OwnOriginSettings>, listeningPort?: number): string[] {
  return [...ownOrigins({ baseUrl: 'http://localhost', additionalOrigins: [], tls: false, ...settings }, listeningPort)].sort();
}

describe('ownOrigins', () => {
  it('is the origin of a public base_url, path and trailing slash dropped, case and default port as browsers send them', () => {
    expect(originsOf({ baseUrl: 'https://aviso.example.org' }, 8000)).toEqual(['https://aviso.example.org']);
    expect(originsOf({ baseUrl: 'https://Aviso.Example.org:443/aviso/' }, 8000)).toEqual(['https://aviso.example.org']);
    expect(originsOf({ baseUrl: 'http://aviso:8000' }, 8000)).toEqual(['http://aviso:8000']);
  });

  it('adds the additional origins as written (startup checked their form)', () => {
    expect(
      originsOf({ baseUrl: 'https://aviso.example.org', additionalOrigins: ['https://aviso.example.int', 'http://10.0.0.5:8000'] }),
    ).toEqual(['http://10.0.0.5:8000', 'https://aviso.example.int', 'https://aviso.example.org']);
  });

  it('names no public origin for a base_url that is no http(s) URL: only the listed ones are own', () => {
    expect(originsOf({ baseUrl: 'not a url', additionalOrigins: ['https://a.example'] }, 8000)).toEqual(['https://a.example']);
    expect(originsOf({ baseUrl: 'ftp://files.example' }, 8000)).toEqual([]);
    expect(originsOf({ baseUrl: 'http://user:pw@aviso.example' }, 8000)).toEqual([]);
  });

  it('takes every loopback name of a loopback base_url, at its port and at the listening port', () => {
    const expected = [
      'http://127.0.0.1:8000',
      'http://127.0.0.1:9100',
      'http://[::1]:8000',
      'http://[::1]:9100',
      'http://localhost:8000',
      'http://localhost:9100',
    ];
    expect(originsOf({ baseUrl: 'http://localhost:8000' }, 9100)).toEqual(expected);
    expect(originsOf({ baseUrl: 'http://127.0.0.1:8000/' }, 9100)).toEqual(expected);
    expect(originsOf({ baseUrl: 'http://[::1]:8000' }, 9100)).toEqual(expected);
  });

  it('keeps the default port out, and the listening port speaks https with TLS', () => {
    expect(originsOf({ baseUrl: 'http://localhost' }, 8443)).toEqual(
      [
        'http://127.0.0.1',
        'http://[::1]',
        'http://localhost',
        'http://127.0.0.1:8443',
        'http://[::1]:8443',
        'http://localhost:8443',
      ].sort(),
    );
    expect(originsOf({ baseUrl: 'http://localhost:8000' }, 8000)).toEqual([
      'http://127.0.0.1:8000',
      'http://[::1]:8000',
      'http://localhost:8000',
    ]);
    expect(originsOf({ baseUrl: 'http://localhost', tls: true }, 8443)).toEqual(
      [
        'http://127.0.0.1',
        'http://[::1]',
        'http://localhost',
        'https://127.0.0.1:8443',
        'https://[::1]:8443',
        'https://localhost:8443',
      ].sort(),
    );
  });

  it('has no listening-port names before the server listens', () => {
    expect(originsOf({ baseUrl: 'http://localhost:8000' })).toEqual([
      'http://127.0.0.1:8000',
      'http://[::1]:8000',
      'http://localhost:8000',
    ]);
  });

  it('gives a public base_url no loopback name, nor a loopback one a name it does not resolve alone', () => {
    expect(originsOf({ baseUrl: 'https://aviso.example.org' }, 8000)).not.toContain('http://localhost:8000');
    expect(originsOf({ baseUrl: 'http://localhost.example.org:8000' }, 8000)).toEqual(['http://localhost.example.org:8000']);
    expect(originsOf({ baseUrl: 'http://127.0.0.2:8000' }, 8000)).toEqual(['http://127.0.0.2:8000']);
    expect(originsOf({ baseUrl: 'http://0.0.0.0:8000' }, 8000)).toEqual(['http://0.0.0.0:8000']);
  });
});
